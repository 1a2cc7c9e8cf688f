// A host as @modelcontextprotocol/ext-apps (npm) makes one, in front of an MCP server: the
// SDK's Client declares MCP Apps in its capabilities, finds the tools that name a UI page
// (getToolUiResourceUri), reads the page and checks its type and _meta.ui the way a host
// does before it builds the iframe (the extension's own zod schemas, buildAllowAttribute),
// then connects the page side (App) to the host side (AppBridge) over a linked in-memory pair
// standing in for the iframe's postMessage, and lets the page call an app-only tool and read
// its own page through the bridge. Everything seen is printed as one line of JSON.
//
// One JSON argument: {"modules": node_modules directory, "server": {"url": ...} or
// {"command": ..., "args": [...], "env": {...}}}.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const settings = JSON.parse(process.argv[2]);

// The packages' ESM entry points, found through their exports maps: this file sits outside
// the node_modules it uses, so bare specifiers would not resolve from here.
async function load(name, subpath = '.') {
  const root = join(settings.modules, name);
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  let entry = manifest.exports[subpath];
  while (typeof entry === 'object') entry = entry.import ?? entry.default;
  return import(pathToFileURL(join(root, entry)).href);
}

const { Client, StreamableHTTPClientTransport, InMemoryTransport } = await load('@modelcontextprotocol/client');
const { StdioClientTransport } = await load('@modelcontextprotocol/client', './stdio');
const bridge = await load('@modelcontextprotocol/ext-apps', './app-bridge');
const { App } = await load('@modelcontextprotocol/ext-apps', '.');
const serverHelpers = await load('@modelcontextprotocol/ext-apps', './server');

const client = new Client(
  { name: 'ext-apps-host', version: '1.0.0' },
  { capabilities: { extensions: { [serverHelpers.EXTENSION_ID]: { mimeTypes: [bridge.RESOURCE_MIME_TYPE] } } } },
);
const server = settings.server;
const transport = server.url
  ? new StreamableHTTPClientTransport(new URL(server.url))
  : new StdioClientTransport({ command: server.command, args: server.args, env: server.env, stderr: 'inherit' });
await client.connect(transport);

const report = { protocolVersion: client.getNegotiatedProtocolVersion?.() ?? null };
report.serverExtension = client.getServerCapabilities()?.extensions?.[serverHelpers.EXTENSION_ID] ?? null;

const { tools } = await client.listTools();
report.tools = {};
const pages = new Map();
for (const tool of tools) {
  const uri = bridge.getToolUiResourceUri(tool);
  const toolMeta = tool._meta?.ui === undefined ? null : bridge.McpUiToolMetaSchema.safeParse(tool._meta.ui);
  report.tools[tool.name] = {
    uri: uri ?? null,
    appOnly: bridge.isToolVisibilityAppOnly(tool),
    modelOnly: bridge.isToolVisibilityModelOnly(tool),
    metaValid: toolMeta === null ? null : toolMeta.success,
  };
  if (uri) pages.set(uri, tool.name);
}

const { resources } = await client.listResources();
report.pages = {};
for (const uri of pages.keys()) {
  const listed = resources.find((resource) => resource.uri === uri);
  const { contents } = await client.readResource({ uri });
  const [item] = contents;
  // The content item's _meta.ui first, the listing's as the fallback, as hosts read them.
  const ui = item._meta?.ui ?? listed?._meta?.ui ?? {};
  const parsed = bridge.McpUiResourceMetaSchema.safeParse(ui);
  report.pages[uri] = {
    listed: listed !== undefined,
    listedMimeType: listed?.mimeType ?? null,
    mimeType: item.mimeType,
    isApp: item.mimeType === bridge.RESOURCE_MIME_TYPE,
    html: item.text,
    metaValid: parsed.success,
    csp: parsed.success ? parsed.data.csp ?? null : null,
    allow: bridge.buildAllowAttribute(parsed.success ? parsed.data.permissions : undefined),
    domain: parsed.success ? parsed.data.domain ?? null : null,
    prefersBorder: parsed.success ? parsed.data.prefersBorder ?? null : null,
  };
}

// The page, connected to the host through the bridge, calls the tool only it may call.
const [viewSide, hostSide] = InMemoryTransport.createLinkedPair();
const appBridge = new bridge.AppBridge(client, { name: 'ext-apps-host', version: '1.0.0' }, {
  serverTools: {},
  serverResources: {},
});
await appBridge.connect(hostSide);
// No DOM here to measure: the page's automatic size reports stay off.
const view = new App({ name: 'weather-view', version: '1.0.0' }, {}, { autoResize: false });
await view.connect(viewSide);
const appOnly = Object.entries(report.tools).find(([, seen]) => seen.appOnly)?.[0];
if (appOnly) {
  const called = await view.callServerTool({ name: appOnly, arguments: { city: 'Oslo' } });
  report.viewCalled = { tool: appOnly, text: called.content?.[0]?.text ?? null, isError: called.isError ?? false };
}
const [firstPage] = pages.keys();
if (firstPage) {
  const read = await view.readServerResource({ uri: firstPage });
  report.viewRead = read.contents?.[0]?.mimeType ?? null;
}
const forecast = Object.entries(report.tools).find(([, seen]) => seen.uri && !seen.appOnly)?.[0];
if (forecast) {
  const called = await client.callTool({ name: forecast, arguments: { city: 'Oslo' } });
  report.modelCalled = { tool: forecast, text: called.content?.[0]?.text ?? null };
}

await view.close();
await appBridge.close();
await client.close();
process.stdout.write(`${JSON.stringify(report)}\n`);

// A real OpenID Connect provider for the end-to-end tests: oidc-provider (npm), on
// 127.0.0.1, a port of the system's choosing. What it knows is given as one JSON argument:
//   {"module": the path of oidc-provider's entry file (lib/index.js),
//    "client_id", "client_secret", "redirect_uri", "users": [{"sub", "email", "name"}]}
// One confidential client (the MCP server's OAuthProxy; authorization_code with PKCE S256),
// the users' claims (openid: sub; email: email; profile: name), and oidc-provider's own
// development interactions: a login page (name="login"; any password, the dev pages do not
// check one) and a consent page ("Continue"). Once listening it prints one line,
// {"issuer": "http://127.0.0.1:PORT"}, on stdout; the discovery document is at
// {issuer}/.well-known/openid-configuration. It runs until killed.
import http from 'node:http';
import { pathToFileURL } from 'node:url';

const settings = JSON.parse(process.argv[2]);
const { default: Provider } = await import(pathToFileURL(settings.module).href);
const users = new Map(settings.users.map((user) => [user.sub, user]));

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [{
      client_id: settings.client_id,
      client_secret: settings.client_secret,
      redirect_uris: [settings.redirect_uri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    }],
    claims: { openid: ['sub'], email: ['email'], profile: ['name'] },
    async findAccount(ctx, sub) {
      const user = users.get(sub);
      if (!user) return undefined;
      return { accountId: sub, async claims() { return { ...user }; } };
    },
  });
  server.on('request', provider.callback());
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});

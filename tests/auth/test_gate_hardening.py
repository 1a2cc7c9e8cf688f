"""The gate's edges: a configuration that checks no audience is warned about, and the
configured ``resource`` is the audience by default; two ``Authorization`` headers are
refused 400; a WebSocket stops serving once its token expires. Real tokens, real sockets."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from mcpkit.auth import BearerAuthConfig, BearerAuthGate, IntrospectionVerifier, JwtVerifier
from tests.auth._support import ISSUER
from tests.auth.test_server_gate import (
    ACCEPT,
    AUDIENCE,
    INIT,
    INIT_LEGACY,
    INITIALIZED,
    bearer,
    challenge_of,
    reach,
)

WAIT = 10.0
OTHER = "https://other.example.test/mcp"


# -- audience ---------------------------------------------------------------------------


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "mcpkit.auth" and r.levelno == logging.WARNING
    ]


def test_a_gate_checking_no_audience_logs_a_warning_naming_the_option(signer, caplog):
    caplog.set_level(logging.WARNING, logger="mcpkit.auth")
    jwt = JwtVerifier(jwks=signer.jwks(), issuer=ISSUER)
    introspection = IntrospectionVerifier(
        "https://as.example.test/introspect", client_auth_method="none"
    )
    for verify in (jwt.verify, introspection, lambda token: None):
        caplog.clear()
        BearerAuthGate(BearerAuthConfig(verify=verify))
        (warning,) = warnings_of(caplog)
        assert "expected_resource" in warning and "audience=" in warning
        # Checked by the gate (or not turned off), nothing to say.
        caplog.clear()
        BearerAuthGate(BearerAuthConfig(verify=verify, expected_resource=AUDIENCE))
        BearerAuthGate(BearerAuthConfig(verify=verify, resource=AUDIENCE))
        assert warnings_of(caplog) == []
    # Turned off at the gate: warned, unless the verifier checks it.
    caplog.clear()
    BearerAuthGate(
        BearerAuthConfig(
            verify=jwt.verify, expected_resource=AUDIENCE, validate_token_resource=False
        )
    )
    assert len(warnings_of(caplog)) == 1
    caplog.clear()
    checked = JwtVerifier(jwks=signer.jwks(), issuer=ISSUER, audience=AUDIENCE)
    BearerAuthGate(BearerAuthConfig(verify=checked.verify))
    assert warnings_of(caplog) == []


async def test_the_configured_resource_is_the_audience_tokens_must_carry(app, signer):
    async with (
        asyncio.timeout(30),
        reach(app, signer, expected_resource="", resource=AUDIENCE) as r,
    ):
        foreign = await r.streamable_post(bearer(signer.token(audience=OTHER)))
        assert foreign[0] == 401 and challenge_of(foreign[1]).error == "invalid_token"
        assert (await r.streamable_post(bearer(signer.token(audience=None))))[0] == 401
        ours = await r.streamable_post(bearer(signer.token(audience=[OTHER, AUDIENCE])))
        assert ours[0] == 200


# -- two Authorization headers ------------------------------------------------------------


async def test_two_authorization_headers_are_refused_400(app, signer):
    async with asyncio.timeout(30), reach(app, signer) as r:
        good = r.good["authorization"]
        for pair in (("Bearer wrong", good), (good, good)):
            headers = [(k, v) for k, v in ACCEPT.items()] + [
                ("authorization", pair[0]),
                ("authorization", pair[1]),
            ]
            response = await r.http.post(r.url, json=INIT, headers=headers)
            assert response.status_code == 400, response.text
            assert response.json()["error"] == "invalid_request"
            assert challenge_of(response.headers).error == "invalid_request"
        # One is fine.
        assert (await r.streamable_post(r.good))[0] == 200
        # The WebSocket upgrade too.
        ws_url = r.url.replace("http://", "ws://") + "/ws"
        with pytest.raises(InvalidStatus) as refused:
            async with connect(
                ws_url,
                additional_headers=[("authorization", "Bearer wrong"), ("authorization", good)],
                subprotocols=["mcp"],
            ):
                pass
        assert refused.value.response.status_code == 400


# -- a WebSocket outliving its token ------------------------------------------------------


async def test_a_websocket_is_closed_1008_when_its_token_expires(app, signer):
    async with asyncio.timeout(30), reach(app, signer) as r:
        ws_url = r.url.replace("http://", "ws://") + "/ws"
        # exp one to two seconds ahead (whole seconds); the verifier's leeway would let the
        # token in for 30 s more, the socket must not keep it past exp.
        token = signer.token(audience=AUDIENCE, lifetime=2)
        exp = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))["exp"]
        async with connect(ws_url, additional_headers=bearer(token), subprotocols=["mcp"]) as ws:
            await ws.send(json.dumps(INIT_LEGACY))
            assert "result" in json.loads(await asyncio.wait_for(ws.recv(), WAIT))
            await ws.send(json.dumps(INITIALIZED))
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 5)  # nothing comes but the close
            assert time.time() >= exp - 0.1
            # The close frame received (websockets before 15 has no close_code on the
            # connection of its asyncio client).
            assert closed.value.rcvd is not None
            assert closed.value.rcvd.code == 1008
            assert closed.value.rcvd.reason == "access token expired"
        # A fresh token connects again.
        fresh = signer.token(audience=AUDIENCE)
        async with connect(ws_url, additional_headers=bearer(fresh), subprotocols=["mcp"]) as ws:
            await ws.send(json.dumps(INIT_LEGACY))
            assert "result" in json.loads(await asyncio.wait_for(ws.recv(), WAIT))

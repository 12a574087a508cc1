"""The OpenID provider the tests start (tests/oidc_provider.py) behaves as a real one: discovery,
published keys, JWT access tokens for the API's audience, the code flow with PKCE through its
log-in form with the account's groups in the id token, refresh, RP-initiated log-out, runtime
client registration and key rotation on the same issuer."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from joserfc import jwt
from joserfc.errors import ExpiredTokenError, InvalidClaimError, JoseError
from joserfc.jwk import KeySet

from tests.oidc_provider import (
    AUDIENCE,
    OTHER_AUDIENCE,
    OidcProvider,
    follow,
    login,
    new_signing_key,
    pkce_pair,
    running_oidc_provider,
    submit_form,
)


def verify(token: str, jwks: KeySet, issuer: str, audience: str) -> dict[str, Any]:
    """The claims of `token` once its signature (by kid, from `jwks`), issuer, audience and
    expiry hold; raises JoseError otherwise."""
    decoded = jwt.decode(token, jwks, algorithms=["RS256"])
    registry = jwt.JWTClaimsRegistry(
        iss={"essential": True, "value": issuer},
        aud={"essential": True, "value": audience},
        exp={"essential": True},
    )
    registry.validate(decoded.claims)
    return decoded.claims


def test_discovery_document(oidc_provider: OidcProvider) -> None:
    document = oidc_provider.metadata()
    assert document["issuer"] == oidc_provider.issuer
    assert oidc_provider.issuer == f"http://127.0.0.1:{oidc_provider.port}"
    for endpoint in (
        "authorization_endpoint",
        "token_endpoint",
        "userinfo_endpoint",
        "jwks_uri",
        "end_session_endpoint",
        "registration_endpoint",
    ):
        assert document[endpoint].startswith(oidc_provider.issuer + "/"), endpoint
    assert document["code_challenge_methods_supported"] == ["S256"]
    assert {"authorization_code", "client_credentials", "refresh_token"} <= set(
        document["grant_types_supported"]
    )
    assert {"openid", "profile", "email", "groups"} <= set(document["scopes_supported"])
    assert "groups" in document["claims_supported"]


def test_jwks_publishes_the_public_signing_key(oidc_provider: OidcProvider) -> None:
    [key] = oidc_provider.jwks()["keys"]
    assert key["kid"] == oidc_provider.signing_key.kid
    assert key["kty"] == "RSA" and key["use"] == "sig"
    assert "d" not in key and "p" not in key
    assert key["n"] == oidc_provider.signing_key.as_dict()["n"]


def test_client_credentials_jwt_verified_against_jwks(oidc_provider: OidcProvider) -> None:
    jwks = oidc_provider.key_set()
    token = oidc_provider.client_credentials_token()
    assert jwt.decode(token, jwks).header["typ"] == "at+jwt"
    claims = verify(token, jwks, oidc_provider.issuer, AUDIENCE)
    assert claims["sub"] == claims["client_id"] == oidc_provider.client.client_id
    assert claims["exp"] - claims["iat"] == oidc_provider.access_token_ttl

    # The same checks refuse a real token for another API, an expired one, a forged one and
    # one from another issuer.
    with pytest.raises(InvalidClaimError):
        verify(
            oidc_provider.client_credentials_token(OTHER_AUDIENCE),
            jwks,
            oidc_provider.issuer,
            AUDIENCE,
        )
    with pytest.raises(ExpiredTokenError):
        verify(
            oidc_provider.mint({"sub": "ada"}, expires_in=-120),
            jwks,
            oidc_provider.issuer,
            AUDIENCE,
        )
    with pytest.raises(JoseError):
        verify(
            oidc_provider.mint({"sub": "ada"}, key=new_signing_key()),
            jwks,
            oidc_provider.issuer,
            AUDIENCE,
        )
    with pytest.raises(InvalidClaimError):
        verify(
            oidc_provider.mint({"iss": "http://127.0.0.1:1"}), jwks, oidc_provider.issuer, AUDIENCE
        )
    assert (
        verify(oidc_provider.mint({"sub": "ada"}), jwks, oidc_provider.issuer, AUDIENCE)["sub"]
        == "ada"
    )


def test_code_flow_with_pkce_through_the_login_form(oidc_provider: OidcProvider) -> None:
    client = oidc_provider.client
    account = oidc_provider.accounts["alan"]
    metadata = oidc_provider.metadata()
    verifier, challenge = pkce_pair()
    params = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": client.redirect_uris[0],
        "scope": "openid profile email groups",
        "state": "state-1",
        "nonce": "nonce-1",
        "resource": oidc_provider.resource_indicator(),
    }
    with httpx.Client() as browser:
        # Without a code challenge the provider refuses the request.
        refused = browser.get(metadata["authorization_endpoint"], params=params)
        assert refused.is_redirect
        assert parse_qs(urlsplit(refused.headers["location"]).query)["error"] == ["invalid_request"]

        params |= {"code_challenge": challenge, "code_challenge_method": "S256"}
        page = follow(browser, browser.get(metadata["authorization_endpoint"], params=params))
        assert page.status_code == 200
        for marker in ('id="username"', 'name="username"', 'id="password"', 'name="password"'):
            assert marker in page.text
        assert 'id="login-submit"' in page.text

        wrong = login(browser, page, account.username, "not-the-password")
        assert wrong.status_code == 401 and 'id="login-error"' in wrong.text
        signed_in = login(browser, wrong, account.username, account.password)
        back = follow(browser, signed_in, stop_at=client.redirect_uris[0])
    assert back.is_redirect
    query = parse_qs(urlsplit(back.headers["location"]).query)
    assert query["state"] == ["state-1"]
    assert query["iss"] == [oidc_provider.issuer]

    exchange = {
        "grant_type": "authorization_code",
        "code": query["code"][0],
        "redirect_uri": client.redirect_uris[0],
    }
    auth = (client.client_id, client.client_secret)
    # The code is bound to the verifier: a wrong one is refused (and burns the code).
    wrong_verifier = httpx.post(
        metadata["token_endpoint"], data=exchange | {"code_verifier": "x" * 43}, auth=auth
    )
    assert wrong_verifier.status_code == 400
    assert wrong_verifier.json()["error"] == "invalid_grant"

    tokens = oidc_provider.authorization_code_tokens(account.username, audience=AUDIENCE)
    jwks = oidc_provider.key_set()
    id_token = verify(tokens["id_token"], jwks, oidc_provider.issuer, client.client_id)
    assert id_token["sub"] == account.subject
    assert id_token["nonce"] == tokens["nonce"]
    assert id_token["groups"] == list(account.groups)
    assert id_token["preferred_username"] == account.username
    assert id_token["email"] == account.email
    assert (id_token["given_name"], id_token["family_name"]) == (
        account.given_name,
        account.family_name,
    )
    access = verify(tokens["access_token"], jwks, oidc_provider.issuer, AUDIENCE)
    assert access["sub"] == account.subject
    assert access["groups"] == list(account.groups)


def test_groups_only_when_asked_and_refresh(oidc_provider: OidcProvider) -> None:
    userinfo_endpoint = oidc_provider.metadata()["userinfo_endpoint"]
    alan = oidc_provider.accounts["alan"]
    # Without a resource the access token is for userinfo, which names the groups when asked.
    tokens = oidc_provider.authorization_code_tokens(alan.username, scope="openid groups")
    userinfo = httpx.get(
        userinfo_endpoint, headers={"Authorization": f"Bearer {tokens['access_token']}"}
    )
    assert userinfo.status_code == 200
    assert userinfo.json() == {"sub": alan.subject, "groups": list(alan.groups)}

    ada = oidc_provider.accounts["ada"]
    tokens = oidc_provider.authorization_code_tokens(
        ada.username,
        scope="openid profile offline_access",
        audience=AUDIENCE,
        extra={"prompt": "consent"},
    )
    jwks = oidc_provider.key_set()
    id_token = verify(
        tokens["id_token"], jwks, oidc_provider.issuer, oidc_provider.client.client_id
    )
    assert id_token["given_name"] == ada.given_name
    assert "groups" not in id_token and "email" not in id_token

    client = oidc_provider.client
    refreshed = httpx.post(
        oidc_provider.metadata()["token_endpoint"],
        data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]},
        auth=(client.client_id, client.client_secret),
    )
    assert refreshed.status_code == 200, refreshed.text
    claims = verify(refreshed.json()["access_token"], jwks, oidc_provider.issuer, AUDIENCE)
    assert claims["sub"] == ada.subject
    assert claims["groups"] == list(ada.groups)
    assert refreshed.json()["access_token"] != tokens["access_token"]


def test_registered_client_and_rp_initiated_logout(oidc_provider: OidcProvider) -> None:
    client = oidc_provider.register_client(
        ["http://127.0.0.1:9/auth/callback"], ["http://127.0.0.1:9/signed-out"]
    )
    account = oidc_provider.accounts["grace"]
    metadata = oidc_provider.metadata()
    _, challenge = pkce_pair()
    params = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": client.redirect_uris[0],
        "scope": "openid groups",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    tokens = oidc_provider.authorization_code_tokens(account.username, client=client)
    with httpx.Client() as browser:
        page = follow(browser, browser.get(metadata["authorization_endpoint"], params=params))
        signed_in = login(browser, page, account.username, account.password)
        assert follow(browser, signed_in, stop_at=client.redirect_uris[0]).is_redirect

        # Signed in: a second request goes straight back to the client.
        again = follow(
            browser,
            browser.get(metadata["authorization_endpoint"], params=params),
            stop_at=client.redirect_uris[0],
        )
        assert again.is_redirect and "code=" in again.headers["location"]

        confirm = browser.get(
            metadata["end_session_endpoint"],
            params={
                "id_token_hint": tokens["id_token"],
                "post_logout_redirect_uri": client.post_logout_redirect_uris[0],
                "state": "bye",
            },
        )
        assert confirm.status_code == 200
        done = follow(
            browser,
            submit_form(browser, confirm, "op.logoutForm"),
            stop_at=client.post_logout_redirect_uris[0],
        )
        assert done.headers["location"] == client.post_logout_redirect_uris[0] + "?state=bye"

        # Signed out: the log-in form again.
        after = follow(browser, browser.get(metadata["authorization_endpoint"], params=params))
        assert after.status_code == 200 and 'id="login-form"' in after.text


def test_short_access_token_ttl(tmp_path: Path) -> None:
    with running_oidc_provider(tmp_path, access_token_ttl=2) as provider:
        token = provider.client_credentials_token()
        claims = verify(token, provider.key_set(), provider.issuer, AUDIENCE)
        assert claims["exp"] - claims["iat"] == 2


def test_rotated_keys_on_the_same_issuer(oidc_provider: OidcProvider) -> None:
    issuer, port = oidc_provider.issuer, oidc_provider.port
    old_kids = [key["kid"] for key in oidc_provider.jwks()["keys"]]
    old_keys = oidc_provider.key_set()
    old_token = oidc_provider.client_credentials_token()
    old_kid = jwt.decode(old_token, old_keys).header["kid"]
    assert old_kids == [old_kid]

    new_key = oidc_provider.rotate_keys()
    assert (oidc_provider.issuer, oidc_provider.port) == (issuer, port)
    new_kids = [key["kid"] for key in oidc_provider.jwks()["keys"]]
    new_keys = oidc_provider.key_set()
    token = oidc_provider.client_credentials_token()
    kid = jwt.decode(token, new_keys).header["kid"]
    assert kid == new_key.kid != old_kid
    assert new_kids == [kid]
    assert kid not in old_kids
    verify(token, new_keys, issuer, AUDIENCE)
    with pytest.raises(JoseError):
        verify(token, old_keys, issuer, AUDIENCE)
    with pytest.raises(JoseError):
        verify(old_token, new_keys, issuer, AUDIENCE)

    # Rotating with the old key kept publishes both, the new one first and signing.
    newer = oidc_provider.rotate_keys(keep_old=True)
    assert [key["kid"] for key in oidc_provider.jwks()["keys"]] == [newer.kid, new_key.kid]
    both = oidc_provider.key_set()
    verify(token, both, issuer, AUDIENCE)
    fresh = oidc_provider.client_credentials_token()
    assert jwt.decode(fresh, both).header["kid"] == newer.kid

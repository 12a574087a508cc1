// A real OpenID provider for the tests: oidc-provider on 127.0.0.1, configured from a JSON file.
//
//   node provider.mjs CONFIG.json
//
// The configuration (written by tests/oidc_provider.py) holds the port (0: any free one), the
// private RSA signing keys (JWKs; the first signs), the clients (oidc-provider client metadata),
// the accounts, the resource servers whose JWT access tokens it issues, and the token lifetimes.
// Log-in is a plain HTML form served by the interaction routes below; consent is granted
// without asking. Once it listens it prints one JSON line to stdout, {"ready": true, "issuer",
// "port"}, and nothing else there; diagnostics go to stderr.

import { readFileSync } from 'node:fs';
import http from 'node:http';

import Provider, { errors } from 'oidc-provider';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const groupsScope = config.groups_scope ?? 'groups';
const groupsClaim = config.groups_claim ?? 'groups';
const accounts = new Map(config.accounts.map((account) => [account.sub, account]));
const resourceServers = new Map(
  config.resource_servers.map((server) => [server.indicator, server]),
);
const clientClaims = new Map(
  config.clients.map((client) => [client.client_id, client.access_token_claims ?? {}]),
);

function escapeHtml(value) {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title, body) {
  return `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>`;
}

function profileClaims(account) {
  const name = [account.given_name, account.family_name].filter(Boolean).join(' ');
  return {
    sub: account.sub,
    preferred_username: account.username,
    name: name || undefined,
    given_name: account.given_name,
    family_name: account.family_name,
    email: account.email,
    email_verified: account.email ? true : undefined,
    [groupsClaim]: account.groups ?? [],
  };
}

const claims = {
  openid: ['sub'],
  profile: ['name', 'given_name', 'family_name', 'preferred_username'],
  email: ['email', 'email_verified'],
  [groupsScope]: [groupsClaim],
};

const ttl = (seconds) => () => seconds;

function makeProvider(issuer, port) {
  const provider = new Provider(issuer, {
    clients: config.clients.map(({ access_token_claims: _, ...metadata }) => metadata),
    jwks: config.jwks,
    // Cookies do not tell ports apart: names of this provider's own, beside a console's (or
    // another provider's) on 127.0.0.1.
    cookies: {
      keys: config.cookie_keys,
      names: {
        session: `op${port}_session`,
        interaction: `op${port}_interaction`,
        resume: `op${port}_interaction_resume`,
      },
    },
    claims,
    scopes: ['openid', 'offline_access', 'profile', 'email', groupsScope],
    // The id token of the code flow carries the claims its scopes ask for, not only userinfo.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    async findAccount(ctx, sub) {
      const account = accounts.get(sub);
      if (account === undefined) return undefined;
      return { accountId: sub, claims: async () => profileClaims(account) };
    },
    async extraTokenClaims(ctx, token) {
      // JWT access tokens name the user's groups for the resource server; a client's own
      // tokens (client_credentials) carry the claims configured for that client.
      if (token.accountId) {
        const account = accounts.get(token.accountId);
        if (account === undefined) return undefined;
        return {
          [groupsClaim]: account.groups ?? [],
          preferred_username: account.username,
          email: account.email,
        };
      }
      return clientClaims.get(token.clientId);
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      registration: {
        enabled: true,
        initialAccessToken: config.registration_token,
      },
      resourceIndicators: {
        enabled: true,
        // A client_credentials request without `resource` gets a token for the first
        // resource server; a code flow gets one only for the resource it asked for.
        async defaultResource(ctx, client, oneOf) {
          if (oneOf) return oneOf;
          if (ctx.oidc.params.grant_type === 'client_credentials') {
            return config.resource_servers[0]?.indicator;
          }
          return undefined;
        },
        useGrantedResource: async () => true,
        async getResourceServerInfo(ctx, indicator) {
          const server = resourceServers.get(indicator);
          if (server === undefined) throw new errors.InvalidTarget();
          return {
            scope: server.scope ?? '',
            audience: server.audience,
            accessTokenTTL: server.access_token_ttl ?? config.access_token_ttl,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
      rpInitiatedLogout: {
        enabled: true,
        async logoutSource(ctx, form) {
          // One form (the provider's, with `logout=yes` added), sent by itself in a browser.
          const confirmed = form.replace(
            '</form>',
            '<input type="hidden" name="logout" value="yes"/></form>',
          );
          ctx.type = 'html';
          ctx.body = page(
            'Sign out',
            `${confirmed}
<button id="logout-submit" type="submit" form="op.logoutForm">Sign out</button>
<script>document.getElementById('op.logoutForm').submit()</script>`,
          );
        },
        async postLogoutSuccessSource(ctx) {
          ctx.type = 'html';
          ctx.body = page('Signed out', '<p id="logged-out">You are signed out.</p>');
        },
      },
    },
    async renderError(ctx, out) {
      ctx.type = 'html';
      ctx.body = page(
        'Error',
        Object.entries(out)
          .map(([key, value]) => `<p class="error" data-key="${escapeHtml(key)}">${escapeHtml(value)}</p>`)
          .join('\n'),
      );
    },
    ttl: {
      AccessToken: (ctx, token) => token.resourceServer?.accessTokenTTL ?? config.access_token_ttl,
      ClientCredentials: (ctx, token) => token.resourceServer?.accessTokenTTL ?? config.access_token_ttl,
      AuthorizationCode: ttl(60),
      IdToken: ttl(config.id_token_ttl),
      RefreshToken: ttl(24 * 60 * 60),
      Interaction: ttl(60 * 60),
      Session: ttl(24 * 60 * 60),
      Grant: ttl(24 * 60 * 60),
    },
  });
  return provider;
}

function loginForm(uid, { username = '', error = '' } = {}) {
  const message = error ? `<p id="login-error">${escapeHtml(error)}</p>` : '';
  return page(
    'Sign in',
    `${message}
<form id="login-form" method="post" action="/interaction/${escapeHtml(uid)}/login">
  <label for="username">Username</label>
  <input id="username" name="username" type="text" autocomplete="username" value="${escapeHtml(username)}" required>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>
  <button id="login-submit" type="submit">Sign in</button>
</form>`,
  );
}

function send(res, status, html) {
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.end(html);
}

async function readForm(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

async function grantConsent(provider, interaction) {
  const { prompt: { details }, params, session } = interaction;
  const grant = interaction.grantId
    ? await provider.Grant.find(interaction.grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  if (details.missingOIDCScope) grant.addOIDCScope(details.missingOIDCScope.join(' '));
  if (details.missingOIDCClaims) grant.addOIDCClaims(details.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(details.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const grantId = await grant.save();
  return interaction.grantId ? {} : { grantId };
}

// GET /interaction/:uid shows the log-in form (or grants consent and moves on);
// POST /interaction/:uid/login checks the username and password.
async function interaction(provider, req, res, uid, action) {
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid) {
    send(res, 400, page('Error', '<p class="error">interaction mismatch</p>'));
    return;
  }
  const { prompt } = details;
  if (req.method === 'GET' && action === undefined) {
    if (prompt.name === 'login') {
      send(res, 200, loginForm(uid, { username: details.params.login_hint ?? '' }));
    } else if (prompt.name === 'consent') {
      const consent = await grantConsent(provider, details);
      await provider.interactionFinished(req, res, { consent }, { mergeWithLastSubmission: true });
    } else {
      send(res, 400, page('Error', `<p class="error">unknown prompt ${escapeHtml(prompt.name)}</p>`));
    }
    return;
  }
  if (req.method === 'POST' && action === 'login' && prompt.name === 'login') {
    const form = await readForm(req);
    const username = form.get('username') ?? '';
    const account = config.accounts.find((candidate) => candidate.username === username);
    if (account === undefined || account.password !== (form.get('password') ?? '')) {
      send(res, 401, loginForm(uid, { username, error: 'Invalid username or password.' }));
      return;
    }
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: account.sub } },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  send(res, 405, page('Error', '<p class="error">method not allowed</p>'));
}

const INTERACTION = /^\/interaction\/([A-Za-z0-9_-]+)(?:\/(login))?$/;
let provider;
let providerCallback;

const server = http.createServer((req, res) => {
  const match = INTERACTION.exec(new URL(req.url, 'http://localhost').pathname);
  if (match === null) {
    providerCallback(req, res);
    return;
  }
  interaction(provider, req, res, match[1], match[2]).catch((error) => {
    console.error(error);
    if (!res.headersSent) {
      send(res, 400, page('Error', `<p class="error">${escapeHtml(error.message)}</p>`));
    } else {
      res.end();
    }
  });
});

server.listen(config.port ?? 0, '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  provider = makeProvider(issuer, port);
  provider.on('server_error', (ctx, error) => console.error('server_error', error));
  providerCallback = provider.callback();
  process.stdout.write(`${JSON.stringify({ ready: true, issuer, port })}\n`);
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
}

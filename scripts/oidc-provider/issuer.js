// A throwaway OpenID Connect issuer for docindex's tests, built on the real
// oidc-provider package. It listens on loopback, issues RS256-signed JWT
// access tokens through the client_credentials grant and adds the claims
// docindex reads (email, name, groups, roles) per client.
//
// Usage: node issuer.js '<config JSON>'
//
//   {
//     "port": 0,                           // 0 picks a free port
//     "audience": "https://docindex.test", // default resource (the "aud")
//     "ttl": 300,                          // access token lifetime, seconds
//     "clients": [{
//       "client_id": "alice", "client_secret": "secret",
//       "claims": {"sub": "u-alice", "email": "alice@example.com",
//                  "name": "Alice", "groups": ["g1"], "roles": ["admin"]}
//     }]
//   }
//
// A token request may name another audience with the "resource" parameter.
// Once listening, it prints one JSON line to stdout: {"issuer": "http://..."}.
// It exits on SIGTERM/SIGINT and when its stdin closes, so a test that dies
// without cleaning up does not leave it running.

import * as crypto from 'node:crypto';
import * as http from 'node:http';

import Provider from 'oidc-provider';

const config = JSON.parse(process.argv[2] || '{}');
const audience = config.audience || 'https://docindex.test';
const ttl = config.ttl || 300;
const clients = config.clients || [];
const claimsByClient = new Map(clients.map((c) => [c.client_id, c.claims || {}]));

// A fresh key per run: tests never depend on a fixed key, and oidc-provider
// would otherwise fall back to its development keys and warn.
const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: crypto.randomUUID(), use: 'sig', alg: 'RS256' };

const server = http.createServer();

server.listen(config.port || 0, '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;

  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({
      client_id: c.client_id,
      client_secret: c.client_secret,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
    })),
    jwks: { keys: [jwk] },
    cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => audience,
        useGrantedResource: async () => true,
        // Every resource is accepted so a test can obtain a token for an
        // audience docindex does not expect.
        getResourceServerInfo: async (_ctx, resource) => ({
          scope: '',
          audience: resource,
          accessTokenTTL: ttl,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    // sub itself cannot come from here: oidc-provider sets it to the client id
    // after merging these, so the customizer below overrides it.
    extraTokenClaims: async (_ctx, token) => {
      const { sub, ...rest } = claimsByClient.get(token.clientId) || {};
      return rest;
    },
    formats: {
      customizers: {
        jwt: async (_ctx, token, jwt) => {
          const { sub } = claimsByClient.get(token.clientId) || {};
          if (sub !== undefined) {
            if (sub === null) {
              delete jwt.payload.sub;
            } else {
              jwt.payload.sub = sub;
            }
          }
        },
      },
    },
  });
  provider.on('server_error', (_ctx, err) => console.error('oidc-provider:', err));

  server.on('request', provider.callback());
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});

// Nothing to flush: tokens live in memory only, so exit at once rather than
// wait for keep-alive connections to drain.
const stop = () => process.exit(0);
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();

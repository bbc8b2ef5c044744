// Package secret seals small secrets (connector passwords and tokens) with AES-256-GCM under a
// server key, so they are stored encrypted at rest and opened only when a connector needs them.
package secret

{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:bad29eb27998c9d7",
  "name": "json_query",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:e5a2ce672a1e8d306521c2b51d70d843cb13a1c7552761a78025f6c12e177233",
    "code": "blake3:c57950462d51562e8f6c1f6c9b24072d6ed441501b1f5ff2c7e3cd4f20daa5f1",
    "schema": "blake3:06b0766962aa363d90c2bb9879718c9b0292329a5c69de045ac24bd5e8301b6a",
    "profile_lock": "blake3:d9a0d1bd37c6015013b51814f7b61802493185b1b33c59c4ba4861eb6ae6fdd0"
  },
  "signature": "tCsdtzr0j//X3KdlG+5xI66i+Kk3xtogmBsBW+oYKzC3K2N6sWwTK4V71oAJiSwAfC6fJ7XJ/6nK9+GCXvYyCw=="
}

{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "fs_search",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:6d5e3e0f4eb956b39bf372ea03df0a24e4214cdaa90d8864df31996bb5dea280",
    "code": "blake3:5c8b99a5b64690577a7c6fb914cb54a5f80418b49e7bca9adcd89751efdba33a",
    "schema": "blake3:957b578c497d9abb55c5134578368bfe0a9fdf631fd527c5505a27d47a7b3dd5",
    "profile_lock": "blake3:9108354923671da4a012c327cfe80387ebb473c74cad95cdcba42bca2a3b07dd"
  },
  "signature": "/DcJUS8sSZ8v+nHk0b9LX0dAn86MpyvP8UiY1kE6lA1tIDUjYjB84JwxN9/usmPN0ZPhdqneZdmdQjtSJZ2zBQ=="
}

{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "mail_find",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:d6fdee2cb162681c132dd8d3db409e6ed5d3ab768989ed620bcfd33ffb63aa8c",
    "code": "blake3:4109e89ec3f7ad2c76f37380acb8908b91a8bca748f0c72e2e5039c956128e45",
    "schema": "blake3:426a1b4c862856358c3c7cfd93c8459e3b720f17f1f8d43a3ea92cff2bf46922",
    "profile_lock": "blake3:2885c56ab269f0d3e788522d7ed24dee1c1d93861400668a3b21c273e48ca77c"
  },
  "signature": "wqU7Mktd5+RUYUWngmJU/H+hypINmxQZObkDZtCqo0RSV9dch01ayZhjrlhZbfBBLOHQ4tun/LwJMP1Xsx0mAA=="
}

{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "mail_find",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:d6fdee2cb162681c132dd8d3db409e6ed5d3ab768989ed620bcfd33ffb63aa8c",
    "code": "blake3:d76b25c5eb16a09bc33aeb37dbc9ba39d290f1f5c27dab930fc3978ad9efed19",
    "schema": "blake3:426a1b4c862856358c3c7cfd93c8459e3b720f17f1f8d43a3ea92cff2bf46922",
    "profile_lock": "blake3:2885c56ab269f0d3e788522d7ed24dee1c1d93861400668a3b21c273e48ca77c"
  },
  "signature": "jWTmtl+R21+yGvqxrt5F+x6caCG9XWYD098bLY8fqCJ309Il/r79KOjMY3xMkl1nOjFg49U+VeZRzVB3Js5uAw=="
}

{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "fs_list",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:c5a8dd499f22e44014f697282f6ce3c57f28f06b6b2bd26a6e1a729e83f311b8",
    "code": "blake3:05f5b22b0ec69aef4a70e75d20c581d96588c79439aa853a7ef05073f249cf80",
    "schema": "blake3:3b5497557e62056e80a901350436c2f5413cee28b2cf6f135e6c2a435e54b4cd",
    "profile_lock": "blake3:8bdfc7b97c2d56d0aa63e2c2e8620e8a07d1a79638dd3e07e5ef87b8a5ed4875"
  },
  "signature": "SfjskZOM+5A6H1WeJEGRxt94xNFbQcQXvZi05X04P7m59txkwWiUzyvNn71ewTYWJ7J8G38fIq7xSoxU55aIBg=="
}

{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "archive_extract",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:e57fd99169f01d5507fc88fd55b3a9854e4b3fd90061b8596caec38fa09e8fb7",
    "code": "blake3:812ea5b9343e2ac4c889147a6633419c957202557789300b525080fa2fe61060",
    "schema": "blake3:9fda631602ea36ec5088f404cc8c6ee7ded3135aeaaf5336bf50021b89134c26",
    "profile_lock": "blake3:a26ccfe6179908903e3a764b9d8318b85f8074e391421f5dfb5af516e264439e"
  },
  "signature": "gSoGBTmkTV91YrLHWU8gl5O0sp+tSwM1VGmtvPxL28bqgeIwjt1iWYqO1aph8oB3zJ7a73SZlJlpR7zW+F5YAw=="
}

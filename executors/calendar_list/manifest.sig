{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "calendar_list",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:8b4dfa6d1c7bee6cb08d81307a16867fafd025f88ef0c3dbd35758c8d5145ffc",
    "code": "blake3:c2c6c721dbff8ea8ba5156991d30e395dbcda28e87beeefe57d4c4e22af0aa14",
    "schema": "blake3:a8fa4a1a7e2256146ac2ce5b71c764f696cd5ade69ed4f3fbac3b6dc4867ef0b",
    "profile_lock": "blake3:0d12a4030d7197ef0ffe7ab63af0b4db057eca46f4a79a2f8d08ffc2eea75733"
  },
  "signature": "c4M2+63I/99UFWYE0a7dhI6NGDrT3IksRgXODt8Sb1w8kjuRPMHa6cLOh0Pg3WE2g8fb0K0qTd4MZ0KSozJ6Aw=="
}

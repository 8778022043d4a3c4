{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "count_entries",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:2f383c28fd450606cf6f657dc7038902c7ac494fc3868c3c95fe564401fc66fd",
    "code": "blake3:2969f2a63a332f7d70c311ef7d0c5e263c675f6f55fcc7968fc36157398435ce",
    "schema": "blake3:eed9097d6a5d89db2b773a929ba3e986517946dfb3fb366d2e811571e831273b",
    "profile_lock": "blake3:2dc882df47a871997df285e6849d21bc8b94849e4ef00b7c48e3207ad138c0c2"
  },
  "signature": "i0Biij43Ym/MdKWXfmtTlZ3zKYPd7xz21HSAEOVNx0wEj6wgZGrfQa+MPH34VjZb1Qn2UGG9oQJVFwe3V4PCAg=="
}

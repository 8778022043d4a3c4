{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "calendar_add",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:4f6853960cb7f0ac16016fe4785e02373e6d75ebc467e842ed38ba57c8844732",
    "code": "blake3:f407a113d4e035666e24bbc2b1db690d922413845c8e25dca0ea91972b589016",
    "schema": "blake3:ca8059c7dd349d5d0454023107779c9995c45e304d064d3d0e085b9e585199c2",
    "profile_lock": "blake3:5e5150df10e2378de0a291d9dfd1d2cd14bdfe3f7dfcdeb1b2bc875765303801"
  },
  "signature": "PmSiSLp88GKkPM+csEjxlzVmkmoGP9+Uy5gUk2LMpjNrB6QvfF+9A4BNEaGg3G4NszzO1pQtLxk1Gg2r67CdDg=="
}

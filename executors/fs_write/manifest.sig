{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "fs_write",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:8373ca4b039613d3cebe95c03842c513dcb2254ac88dff499ee0704ef4cf4b8e",
    "code": "blake3:28b0f5356753db01a5cc62c41dc955b59241d121af47a9e88a5aa2b6570cc741",
    "schema": "blake3:534f77cb257b66178dd797dda45f508cecc130ed50d286a6e5050aa5fb3c27e4",
    "profile_lock": "blake3:fbbd75630ef26c7b7409e51b452449eecc0e755901f02394b5233406a88712ee"
  },
  "signature": "Jb4TddraUSsM2h9k5z5aGBUTQHSvGcib3Z30/BnBDIhrEfVrGtfPHNa3c12Zy4BZZam+w4FoaymMKzEXC84lAA=="
}

{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:bad29eb27998c9d7",
  "name": "fs_write",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:8373ca4b039613d3cebe95c03842c513dcb2254ac88dff499ee0704ef4cf4b8e",
    "code": "blake3:a6a84cbb1e73333b3674fce2aaa04e4609a331892e73a3180307740d8f431323",
    "schema": "blake3:534f77cb257b66178dd797dda45f508cecc130ed50d286a6e5050aa5fb3c27e4",
    "profile_lock": "blake3:fbbd75630ef26c7b7409e51b452449eecc0e755901f02394b5233406a88712ee"
  },
  "signature": "thbj4tPLJ/VLkIDWTSHtBmYltIXDfIQ9sG+KuvbPkj0eHRy45v0aMoRNGn/2SvkhIn1xSnyV6tBw49CkBoCMCg=="
}

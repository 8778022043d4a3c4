{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:bad29eb27998c9d7",
  "name": "fs_write",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:8373ca4b039613d3cebe95c03842c513dcb2254ac88dff499ee0704ef4cf4b8e",
    "code": "blake3:a6a84cbb1e73333b3674fce2aaa04e4609a331892e73a3180307740d8f431323",
    "schema": "blake3:ac65f083a7d77322f061b59b70823429c7df4597af13776e12364ca30317a97e",
    "profile_lock": "blake3:fbbd75630ef26c7b7409e51b452449eecc0e755901f02394b5233406a88712ee"
  },
  "signature": "awPb/PwohpAl4mN24sB3rxIIpZOBGXpO/aCrn+giqeEV/5RLfFGWgaaY7UdxuD0To6WiuJLTG7/ptFfBmOfCAQ=="
}

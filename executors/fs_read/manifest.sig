{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:bad29eb27998c9d7",
  "name": "fs_read",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:0d40b96bbdbe295b59adcb9c746d976c5e99fdd0541302152b95239a4c9a7542",
    "code": "blake3:f74e959dc20b8ecc70e652e9f6fb82eb95403bf2dcb5a92a3b56c9a90d9c6976",
    "schema": "blake3:afe70b919e82037d5816b130ba1d1f2d85621669d8d01b8a501a387e5e08781d",
    "profile_lock": "blake3:30e3c2910459af25139f8385799594b20cd861e9c51f14c459ec2c58b07eb7c6"
  },
  "signature": "N/1S7ZkC99SYLHW5ugwiuxB2IeXE/koY68x1UmR3D4AkQOEF939f4yG5kt31cVa/Ramsi+1YG2zkNJh2sF5NCQ=="
}

{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:bad29eb27998c9d7",
  "name": "fs_read",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:0d40b96bbdbe295b59adcb9c746d976c5e99fdd0541302152b95239a4c9a7542",
    "code": "blake3:7c2bc91a63b495bdd0e382515d06ee173ad800ae087af16119fb47ee0313c569",
    "schema": "blake3:afe70b919e82037d5816b130ba1d1f2d85621669d8d01b8a501a387e5e08781d",
    "profile_lock": "blake3:30e3c2910459af25139f8385799594b20cd861e9c51f14c459ec2c58b07eb7c6"
  },
  "signature": "wsnFuAfptXPZNptRoyn39p6we5AYpP86sBJw4G8tUFAK22pG02VBQnmQPsbcTq4evI0mrYjD+jF6yKEBi1YqBw=="
}

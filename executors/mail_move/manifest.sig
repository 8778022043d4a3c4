{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "mail_move",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:bb4b719cb7ced7150e152688b5ff490d3a0ad7c884e8adda2f2d486dcabba8c6",
    "code": "blake3:86697aee9ae025d9796612b7d4a47cf7abb63a2196f61556fecc9521621f34a5",
    "schema": "blake3:4afa05f8ab562602a45646d1af786e0c6258e4d70f6dafa945feb8efaeaace49",
    "profile_lock": "blake3:7cee1a342f9167426f89af5092f58db867a56bb691c7a96f90f2d1a78795fde6"
  },
  "signature": "1Geo3eLIaTD87ZBvY9dSFID9+YMaAFNrippLJFflpaAa9ItptrQAIaHkGOAIwCZe1gxl0C559upAVX+NQT1jAw=="
}

{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "fs_read",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:0d40b96bbdbe295b59adcb9c746d976c5e99fdd0541302152b95239a4c9a7542",
    "code": "blake3:92e8443b279eedff1015b935a5e95ce6ecbf438951879a17dd9d5e70f809b67f",
    "schema": "blake3:afe70b919e82037d5816b130ba1d1f2d85621669d8d01b8a501a387e5e08781d",
    "profile_lock": "blake3:30e3c2910459af25139f8385799594b20cd861e9c51f14c459ec2c58b07eb7c6"
  },
  "signature": "+z/areTPNC2GE/tTgYQmV5TJlk8wIkhIOF73U4++svI2zhB+j9GIV4lcWShIeMuLwt+y/fgBkmrmDK0col+sDQ=="
}

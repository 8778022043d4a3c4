{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "filter_entries",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:68cb77ce605ead079346c2457346349790f6a8958351b334bb96206ce4abbf2e",
    "code": "blake3:f9f54f399343dc3d80bc2f7168f89e7954a7e11e6701e6bf62c1a81df75af488",
    "schema": "blake3:89a984acbda5960949fc1601174947d9b7b9b88539b19ac5003680517dbbf434",
    "profile_lock": "blake3:7b273775f421714f4a71ae67a4011f5a090d793d734f35bf9e87249807ebcdab"
  },
  "signature": "xT17nofOpujjIfsV1UPDbgZl+s2Pj+5YdkcMW1c02JX4/AVi0fpzFzvLSIJ852pjZfQhxweNZ+sSQm9iwMuXBA=="
}

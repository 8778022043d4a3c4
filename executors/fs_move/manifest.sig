{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "fs_move",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:936163cf180d82ce0e20192cf8fa9bb66e875fd356f6c0bfc0e52d39e417ee0c",
    "code": "blake3:f400a5e89ac10961bd5f3fbd5d957662069775c3a5747d6b77a24c897429db50",
    "schema": "blake3:dde1482a3b5d200b1332e50267dc6109491c6a9d6188afcab90006a86edef7d4",
    "profile_lock": "blake3:d21bd1f6d5e7ffcd5d4c56883c6f91601c9f65d763aaacbc835c546045c19426"
  },
  "signature": "++/idD823yJrX2XVOXEJrMCdmUbVMfjpo4QrogySR5VvoyqnVQF/FAj+1tOlhQLUlFcKiE1fBmb1JnW/L9bwAg=="
}

{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:bad29eb27998c9d7",
  "name": "text_stats",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:3d44e4a8a239b84f0cab45b2293079333dc99c92515e9d56b3d8bb3aeb3e153c",
    "code": "blake3:5ed91d3d9ac935ddd16d5ac2a4e0e06f75c84b4a9a70d6054e2bed1ee89e9f50",
    "schema": "blake3:f509e2607637b1bf7a095f89972b634647190ce8d645c8cba41eb0cc7af8995d",
    "profile_lock": "blake3:242f7ec682a6f678fc95491480cc0c9e127c508a016798490b1ead5a94887760"
  },
  "signature": "q15faFYtaC+pIt1RCXmhZTv2PjtVCt/FkFAcwJMb5B5eopLqgtXozirqeRyB0jY1B+TUXErA9BPC/VL5TPuHBg=="
}

{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "text_stats",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:3d44e4a8a239b84f0cab45b2293079333dc99c92515e9d56b3d8bb3aeb3e153c",
    "code": "blake3:5ed91d3d9ac935ddd16d5ac2a4e0e06f75c84b4a9a70d6054e2bed1ee89e9f50",
    "schema": "blake3:84bdda15bdccb0080af298d295d173060ef89195f8831d0f45b1abfa61c35850",
    "profile_lock": "blake3:242f7ec682a6f678fc95491480cc0c9e127c508a016798490b1ead5a94887760"
  },
  "signature": "bdoKzo7YgX0GJvWUZIMa8cT0NEQDlbJ6ww/HzeHVsamQ+p/76q2vdutH07H3ELD4K53f2FfrPG29YDM09vuMCQ=="
}

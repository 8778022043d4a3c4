{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "notes_search",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:56a92307234d89585b9fd7a61c894e758cea2514bc018d28f8f03308267f302a",
    "code": "blake3:1131fddb835b3dea32b958bf2d0bda2d11528bed34ab575efe2abb1f99e4a56e",
    "schema": "blake3:06cdb8c04c8aa9e5e71dadac6e49dcc59979a9aa200b69ac5d03bc90062db66a",
    "profile_lock": "blake3:117245b2bdb54414868ddeadf1bc8b65b111eef33c0cc094135fb717856c414b"
  },
  "signature": "ecWtiTmjbe0tFzi1WAaQh874GFFch7WTIcoGvj44MUJ6gTdL1Qyg2niTzHik3xeYR70A6yhFn4X5JLa9NoHQBQ=="
}

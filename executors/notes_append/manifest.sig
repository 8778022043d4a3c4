{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "notes_append",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:21d2182b4a8be15c55d8ddb283f078dd48581a9ac99251e17b352c0f013c15a7",
    "code": "blake3:4dc896d187a781d87cd782858c171d7a3413e3f238ca0a79139fdc60df056fd2",
    "schema": "blake3:0a5882d020149d2e12e9417c3d7f61bcb0e69bfea73968c005b92962d1e686da",
    "profile_lock": "blake3:fbbd75630ef26c7b7409e51b452449eecc0e755901f02394b5233406a88712ee"
  },
  "signature": "wzkzefWFlGAZVx9jmt3Tf4VwsltS8rciGGlSeTqK/pOn960Sep339aLHbG9nbIcJHtiiDQqCaQqh22jKftDqCA=="
}

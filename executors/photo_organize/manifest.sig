{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "photo_organize",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:65fab43b5786875ca4eaa0ca4546451fdc55da8616c11ba2c6f9855429f1e261",
    "code": "blake3:c0d9f3ccc73934c5fc9c4005abf341d1ddebb6d38cbfc8da388fa7138688aed2",
    "schema": "blake3:5d3dcef3af4909fc8e070f5e464c48e5805b59eaa2f21acdefc11ab7170e5927",
    "profile_lock": "blake3:5e9ac42a090f47d6c69250ade97cd8afc384e22c6c1d73f543df25f66773470a"
  },
  "signature": "JDzyiBtUFuwIwrrVr93A/2IbPyiinpMMjqBLrOSdKjR/foN66uxpnLVlD1o3sVWEszVX81gl9iPrD9oFQmrsBg=="
}

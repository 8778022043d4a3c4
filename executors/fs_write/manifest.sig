{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:bad29eb27998c9d7",
  "name": "fs_write",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:8373ca4b039613d3cebe95c03842c513dcb2254ac88dff499ee0704ef4cf4b8e",
    "code": "blake3:36c67f79e0e8f7e9a8cdae6cbc2a5a594ad211bf9773f1493a4b70a649a3ed65",
    "schema": "blake3:ac65f083a7d77322f061b59b70823429c7df4597af13776e12364ca30317a97e",
    "profile_lock": "blake3:fbbd75630ef26c7b7409e51b452449eecc0e755901f02394b5233406a88712ee"
  },
  "signature": "pkG2oFaBOLxW9gcXji+eTsFtoTJzn4dK78TMLAJmE+Uxp3eWQc2N2o6J67fxIUYXyb/CQkMXrBzJUPsTpcSUCQ=="
}

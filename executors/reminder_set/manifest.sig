{
  "v": 1,
  "alg": "ed25519",
  "key_id": "ed25519:e7ab39ec85a1a166",
  "name": "reminder_set",
  "version": "1.0.0",
  "digests": {
    "manifest": "blake3:c7876a419de09e0464902877846ec23681152fe9772cc1bb0d43dadff9c461e8",
    "code": "blake3:3c499d3bd4a5ac7c0d439dc4327a913c2c0020fe9110df08c715aa0fda8cd44b",
    "schema": "blake3:44b0937019575fed5ba80d097d054aa28faaa0bb732a4cc7cd5dc6f1216d6ff2",
    "profile_lock": "blake3:79a05cf2f3c53c3e226c2e66a21e290495924076977dcb3895367b078293a593"
  },
  "signature": "ferlrYijc7rPUhytT2HmjSqnLHm+B/Pm6V3NdLxh1pByZEgdcNIOnvARqaWXuQ1aDwnOHOX/pB/09kJdy+t4Dg=="
}

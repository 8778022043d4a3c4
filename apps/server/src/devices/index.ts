export { type DeviceAuthority, openDeviceAuthority } from './authority.ts';
export { type DeviceHub, type DeviceHubSettings, type RemoteCallOutcome, startDeviceHub } from './hub.ts';
export { createPairingCode, PAIRING_LIFETIME_MS } from './pairing.ts';
export { remotePolicyRefusal } from './policy.ts';
export {
  createDeviceStore,
  type Device,
  type DeviceStore,
  deviceStoreMigrations,
  MAX_PAIRING_ATTEMPTS,
  newDeviceId,
  type Pairing,
  type RemoteCallRecord,
} from './store.ts';

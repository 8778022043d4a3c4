import {
  createPrivateKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  webcrypto,
  X509Certificate,
} from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '@metnos/executor-sdk';
import { SERVER_COMMON_NAME } from '@metnos/laptop-agent/protocol';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

const ECDSA = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const DAY = 24 * 60 * 60 * 1000;
/** How long a device certificate is valid; pairing again issues a new one. */
const DEVICE_VALIDITY_DAYS = 825;
const OID = {
  commonName: '2.5.4.3',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectKeyIdentifier: '2.5.29.14',
  clientAuth: '1.3.6.1.5.5.7.3.2',
  serverAuth: '1.3.6.1.5.5.7.3.1',
} as const;

let engine: pkijs.CryptoEngine | undefined;
function cryptoEngine(): pkijs.CryptoEngine {
  engine ??= new pkijs.CryptoEngine({
    name: 'node',
    crypto: webcrypto as unknown as pkijs.CryptoEngineParameters['crypto'],
  });
  return engine;
}

function distinguishedName(commonName: string): pkijs.RelativeDistinguishedNames {
  return new pkijs.RelativeDistinguishedNames({
    typesAndValues: [
      new pkijs.AttributeTypeAndValue({
        type: OID.commonName,
        value: new asn1js.Utf8String({ value: commonName }),
      }),
    ],
  });
}

function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

function pem(label: string, der: Uint8Array): string {
  const body = Buffer.from(der)
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n');
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

/** What one certificate says about its subject and its use. */
interface CertificateSpec {
  subject: string;
  issuer: string;
  spki: Uint8Array;
  signingKey: KeyObject;
  days: number;
  role: 'ca' | 'server' | 'device';
}

/** An X.509 v3 certificate made and signed with PKI.js over Node's WebCrypto (ECDSA P-256, SHA-256). */
async function issue(spec: CertificateSpec): Promise<string> {
  const certificate = new pkijs.Certificate();
  certificate.version = 2;
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x40; // positive, and no leading zero byte (DER wants the shortest form)
  certificate.serialNumber = new asn1js.Integer({ valueHex: toArrayBuffer(serial) });
  certificate.subject = distinguishedName(spec.subject);
  certificate.issuer = distinguishedName(spec.issuer);
  const now = Date.now();
  certificate.notBefore.value = new Date(now - 5 * 60_000);
  certificate.notAfter.value = new Date(now + spec.days * DAY);
  certificate.subjectPublicKeyInfo = pkijs.PublicKeyInfo.fromBER(toArrayBuffer(spec.spki));
  const constraints = new pkijs.BasicConstraints(
    spec.role === 'ca' ? { cA: true, pathLenConstraint: 0 } : { cA: false },
  );
  // key usage bits, first octet: digitalSignature 0x80, keyCertSign 0x04, cRLSign 0x02
  const usage = spec.role === 'ca' ? 0x06 : 0x80;
  const keyId = await webcrypto.subtle.digest('SHA-1', toArrayBuffer(spec.spki));
  certificate.extensions = [
    new pkijs.Extension({
      extnID: OID.basicConstraints,
      critical: true,
      extnValue: constraints.toSchema().toBER(false),
      parsedValue: constraints,
    }),
    new pkijs.Extension({
      extnID: OID.keyUsage,
      critical: true,
      extnValue: new asn1js.BitString({
        valueHex: new Uint8Array([usage]).buffer,
        unusedBits: spec.role === 'ca' ? 1 : 7,
      }).toBER(false),
    }),
    new pkijs.Extension({
      extnID: OID.subjectKeyIdentifier,
      extnValue: new asn1js.OctetString({ valueHex: keyId }).toBER(false),
    }),
  ];
  if (spec.role !== 'ca') {
    const purposes = new pkijs.ExtKeyUsage({
      keyPurposes: [spec.role === 'server' ? OID.serverAuth : OID.clientAuth],
    });
    certificate.extensions.push(
      new pkijs.Extension({
        extnID: OID.extKeyUsage,
        critical: true,
        extnValue: purposes.toSchema().toBER(false),
        parsedValue: purposes,
      }),
    );
  }
  const signingKey = await webcrypto.subtle.importKey(
    'pkcs8',
    toArrayBuffer(spec.signingKey.export({ type: 'pkcs8', format: 'der' })),
    ECDSA,
    false,
    ['sign'],
  );
  await certificate.sign(
    signingKey as unknown as Parameters<pkijs.Certificate['sign']>[0],
    'SHA-256',
    cryptoEngine(),
  );
  return pem('CERTIFICATE', new Uint8Array(certificate.toSchema(true).toBER(false)));
}

const FILES = { caKey: 'ca.key', ca: 'ca.pem', serverKey: 'server.key', server: 'server.pem' } as const;

/** The installation's own certificate authority, and the certificate the device channel presents. */
export interface DeviceAuthority {
  /** The CA certificate (PEM) every device pins. */
  readonly ca: string;
  /** The device channel's certificate (CN `metnos-server`, issued by the CA) and its key: the key also signs call tokens. */
  readonly server: { certificate: string; key: string; privateKey: KeyObject };
  /** Issues a device certificate (client authentication, CN the device id) for a public key (SPKI DER). */
  issueDevice(device: string, spki: Uint8Array): Promise<string>;
}

/**
 * Opens the installation's CA in `dir` (`<config dir>/devices`), making it
 * the first time: a P-256 key and a self-signed CA certificate valid ten
 * years, and a server certificate for the device channel, renewed when it has
 * less than 30 days left. Private keys are files of mode 0600 in a 0700
 * folder inside the config dir, which no executor can see.
 *
 * @example
 * const authority = await openDeviceAuthority({ dir: join(configDir, 'devices') });
 * const certificate = await authority.issueDevice('dev_0123abcd', spkiDer);
 */
export async function openDeviceAuthority(settings: { dir: string }): Promise<DeviceAuthority> {
  const { dir } = settings;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const read = (name: string) => readFile(join(dir, name), 'utf8').catch(() => undefined);
  let caKeyText = await read(FILES.caKey);
  let caText = await read(FILES.ca);
  if (!caKeyText || !caText) {
    const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    caKeyText = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    caText = await issue({
      subject: 'Metnos installation CA',
      issuer: 'Metnos installation CA',
      spki: keys.publicKey.export({ type: 'spki', format: 'der' }),
      signingKey: keys.privateKey,
      days: 3650,
      role: 'ca',
    });
    await writeFileAtomic(join(dir, FILES.caKey), caKeyText, 0o600);
    await writeFileAtomic(join(dir, FILES.ca), caText, 0o644);
  }
  const caKey = createPrivateKey(caKeyText);
  const caCertificate = new X509Certificate(caText);
  let serverKeyText = await read(FILES.serverKey);
  let serverText = await read(FILES.server);
  const fresh =
    serverText !== undefined &&
    new X509Certificate(serverText).verify(caCertificate.publicKey) &&
    Date.parse(new X509Certificate(serverText).validTo) - Date.now() > 30 * DAY;
  if (!serverKeyText || !serverText || !fresh) {
    const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    serverKeyText = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    serverText = await issue({
      subject: SERVER_COMMON_NAME,
      issuer: 'Metnos installation CA',
      spki: keys.publicKey.export({ type: 'spki', format: 'der' }),
      signingKey: caKey,
      days: 825,
      role: 'server',
    });
    await writeFileAtomic(join(dir, FILES.serverKey), serverKeyText, 0o600);
    await writeFileAtomic(join(dir, FILES.server), serverText, 0o644);
  }
  return {
    ca: caText,
    server: { certificate: serverText, key: serverKeyText, privateKey: createPrivateKey(serverKeyText) },
    issueDevice: (device, spki) =>
      issue({
        subject: device,
        issuer: 'Metnos installation CA',
        spki,
        signingKey: caKey,
        days: DEVICE_VALIDITY_DAYS,
        role: 'device',
      }),
  };
}

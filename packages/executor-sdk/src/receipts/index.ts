export {
  createReceiptChain,
  type ReceiptChain,
  type ReceiptChainSettings,
  type ReceiptSink,
  type RepairReport,
} from './chain.ts';
export { receiptsDirOf } from './files.ts';
export {
  canonicalJsonText,
  RECEIPT_STRING_LIMIT,
  RECEIPT_TAG,
  type Receipt,
  type ReceiptEntry,
  type ReceiptValue,
  receiptDigest,
  receiptLine,
  receiptSchema,
  receiptText,
} from './format.ts';
export { type FileLockSettings, withFileLock } from './lock.ts';
export {
  type ChainBreak,
  type ChainBreakReason,
  type ChainRepair,
  type ChainReport,
  type VerifyChainSettings,
  verifyReceiptChain,
} from './verify.ts';

/**
 * Prompt-injection signatures: text in evidence that speaks to the model
 * instead of to the person. Each family has a name a reason may show; the
 * matched text itself is never repeated, so a trace cannot carry the payload on.
 */
export interface InjectionSignature {
  family: 'override' | 'role' | 'exfiltration';
  pattern: RegExp;
}

/** The signatures the injection probe looks for, in English and Italian. */
export const INJECTION_SIGNATURES: readonly InjectionSignature[] = [
  {
    family: 'override',
    pattern:
      /\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+)?(?:previous|prior|above|earlier|preceding|original|system)\s+(?:instructions|rules|prompts?|messages|directions|guidelines)\b/i,
  },
  { family: 'override', pattern: /\b(?:new|updated|real)\s+(?:system\s+)?instructions\s*:/i },
  {
    family: 'override',
    pattern: /\bfrom\s+now\s+on,?\s+(?:you|the\s+assistant)\s+(?:will|must|shall|are\s+to)\b/i,
  },
  {
    family: 'override',
    pattern:
      /\b(?:ignora|dimentica)\s+(?:tutte\s+)?(?:le\s+)?istruzioni\s+(?:precedenti|ricevute|di\s+sistema)\b/i,
  },
  {
    family: 'role',
    pattern: /<\/?\s*(?:system|assistant|instructions?)\s*>|<\|(?:im_start|im_end|system|endoftext)\|>/i,
  },
  { family: 'role', pattern: /\[\/?INST\]|<<\/?SYS>>|^\s*#{2,}\s*(?:system|instructions?)\s*:?\s*$/im },
  { family: 'role', pattern: /"role"\s*:\s*"(?:system|developer)"/i },
  {
    family: 'role',
    pattern:
      /\byou\s+are\s+(?:now\s+)?(?:in\s+)?(?:DAN|developer\s+mode|jailbreak(?:ed)?|unrestricted|an?\s+unfiltered)\b|\b(?:act|role-?play)\s+as\s+(?:an?\s+)?(?:unrestricted|unfiltered|jailbroken)\b|\bpretend\s+(?:that\s+)?you\s+(?:have\s+no|are\s+not\s+bound)\b/i,
  },
  {
    family: 'exfiltration',
    pattern:
      /\b(?:reveal|print|show|repeat|output|leak)\s+(?:me\s+)?(?:your|the)\s+(?:system\s+prompt|hidden\s+instructions|initial\s+instructions)\b/i,
  },
  {
    family: 'exfiltration',
    pattern:
      /\b(?:send|forward|upload|post|email)\s+(?:all\s+)?(?:the\s+|your\s+|my\s+)?(?:api\s+keys?|passwords?|credentials|secrets?|private\s+keys?|ssh\s+keys?|tokens?)\s+to\b/i,
  },
];

/** Zero-width, word-joiner, byte-order-mark and bidirectional control characters. */
const INVISIBLE = /[\u200B-\u200F\u2060-\u2064\uFEFF\u202A-\u202E\u2066-\u2069\u00AD]/g;
/** Unicode tag characters (U+E0000–U+E007F): invisible copies of ASCII, a known carrier of hidden prompts. */
const TAG_CHARACTERS = /[\u{E0000}-\u{E007F}]/u;
/** HTML comments and elements styled out of sight, whose text a reader never sees. */
const HIDDEN_MARKUP =
  /<!--[\s\S]*?-->|<([a-z][a-z0-9]*)\b[^>]*\b(?:hidden\b|aria-hidden\s*=\s*["']?true|style\s*=\s*["'][^"']*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?![.\d]*[1-9])|opacity\s*:\s*0(?![.\d]*[1-9])))[^>]*>[\s\S]*?<\/\1\s*>/gi;

/** The signature families a text shows, in a fixed order. */
export function signatureFamilies(text: string): InjectionSignature['family'][] {
  const families = new Set<InjectionSignature['family']>();
  for (const signature of INJECTION_SIGNATURES)
    if (signature.pattern.test(text)) families.add(signature.family);
  return [...families];
}

/**
 * Whether a text hides instructions from a human reader: Unicode tag
 * characters; a signature that only shows once invisible characters are
 * removed; or a signature inside an HTML comment or a hidden element.
 */
export function hidesInstructions(text: string): boolean {
  if (TAG_CHARACTERS.test(text)) return true;
  const visible = text.replace(INVISIBLE, '');
  if (visible !== text && signatureFamilies(visible).length > signatureFamilies(text).length) return true;
  for (const match of visible.matchAll(HIDDEN_MARKUP))
    if (signatureFamilies(match[0]).length > 0) return true;
  return false;
}

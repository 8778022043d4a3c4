export declare const SUPPORTED_KEYWORDS: Set<string>;
export declare function validate(schema: unknown, value: unknown, root?: unknown): string[];
export declare function unsupportedKeywords(schema: unknown, path?: string, found?: string[]): string[];

/**
 * The tables and values of a manifest's text when it is in Metnos's plain layout (what
 * smol-toml would return for it), else undefined: smol-toml then reads it.
 */
export declare function readPlainToml(text: string): Record<string, unknown> | undefined;

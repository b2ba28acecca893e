// Types of scripts/web-bundle.mjs, for the TypeScript tests that import it.
/** A browser bundle of a module of the repository: its code, sizes, and the Node built-ins it still imports. */
export declare function bundleWeb (entry?: string, options?: { minify?: boolean, webAs?: string | null }): Promise<{ code: string, minified: number, gzip: number, builtins: string[] }>

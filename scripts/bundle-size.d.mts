// Types of scripts/bundle-size.mjs for the TypeScript that imports it (bench/footprint.ts).

/** Peers an app brings itself, left out of every bundle. */
export declare const PEERS: string[]

export interface BundleSize {
  /** Bytes of the minified bundle. */
  minified: number
  /** Bytes of that bundle gzipped at level 9. */
  gzip: number
  /** Minified bytes per package (`bodykit` for dist/), largest first. */
  inputs: Record<string, number>
}

/** Bundles `specifierOrPath` as an app's `require()` of it would pull it in (esbuild, platform node, minified). */
export declare function bundleEntry (specifierOrPath: string, options?: { external?: string[], resolveDir?: string }): Promise<BundleSize>

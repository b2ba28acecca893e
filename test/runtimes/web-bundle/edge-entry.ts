// What edge-runtime evaluates: the Web bundle and the driver, as one script that leaves `__bodykitDriver` on the global.
// The harness's esbuild maps src/web to the Web bundle (scripts/web-bundle.mjs), a module of its own beside this one.
import * as readers from '../../../src/web'
import { decompressionFormats, drive, type Readers, type Spec } from './route'

Object.assign(globalThis, {
  __bodykitDriver: {
    // A string crosses from the runtime's realm to the test's as it is.
    run: async (spec: Spec): Promise<string> => JSON.stringify(await drive(readers as unknown as Readers, spec)),
    formats: (): string => JSON.stringify(decompressionFormats())
  }
})

// secure-json-parse, loaded on first use: the poisoning guard's scan, only for texts that can hold `__proto__` or `constructor`.
/* eslint-disable @typescript-eslint/no-require-imports */
import type SecureJsonParseModule from 'secure-json-parse'
import { onFirstUse } from '../dependencies'

export const loadSecureJsonParse = /* @__PURE__ */ onFirstUse((): typeof SecureJsonParseModule => require('secure-json-parse') as typeof SecureJsonParseModule)

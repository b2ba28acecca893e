// The Web bundle imported as a module by Deno (Deno.serve): the cases, the hostile bodies and the fuzz corpora over HTTP answer as the Node build does.
import { runtimeSuite } from './web-bundle/suite'

runtimeSuite('deno')

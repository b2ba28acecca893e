// koa-body's `HttpMethodEnum`, apart from koaBody() itself, so that `bodykit/koa` hands it out without loading the multipart stage.

/** koa-body's `HttpMethodEnum`: the methods `parsedMethods` takes. */
export const HttpMethodEnum = Object.freeze({ POST: 'POST', GET: 'GET', PUT: 'PUT', PATCH: 'PATCH', DELETE: 'DELETE', HEAD: 'HEAD' } as const)

// Placeholder module; replaced by the real implementation.
#include <node_api.h>

static napi_value init(napi_env env, napi_value exports) {
  (void)env;
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)

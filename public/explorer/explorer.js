// The API Explorer page: swagger-ui on the served OpenAPI document, try-it on this origin, test keys
// only (CONTRACT.md "Browser pages"). Plain browser script: it runs as served, no build step.
(function () {
  'use strict';

  var ORIGIN = window.location.origin;
  var CLIENT_HEADER = 'Svc-Client';
  var CLIENT_NAME = 'api-explorer';
  var LIVE_KEY_MESSAGE =
    'Live keys (svc_live_...) are refused here: the Explorer calls the paper engine with a test key (svc_test_...) only. Nothing was sent.';
  var SESSION_MESSAGE =
    'The Explorer takes test keys (svc_test_...) only, not session tokens. Nothing was sent.';
  var refusal = document.getElementById('explorer-refusal');

  function refuse(message) {
    refusal.textContent = message;
    refusal.hidden = false;
  }

  function clearRefusal() {
    refusal.hidden = true;
    refusal.textContent = '';
  }

  function isLiveKey(value) {
    return typeof value === 'string' && value.trim().indexOf('svc_live_') === 0;
  }

  function headerValue(headers, name) {
    var wanted = name.toLowerCase();
    for (var k in headers) {
      if (Object.prototype.hasOwnProperty.call(headers, k) && k.toLowerCase() === wanted) {
        return headers[k];
      }
    }
    return undefined;
  }

  // The authorize step keeps only a test key: a live key or a session token is refused, with
  // a visible message, and never stored (so never sent).
  function TestKeysOnly() {
    return {
      statePlugins: {
        auth: {
          wrapActions: {
            authorize: function (original) {
              return function (payload) {
                var accepted = {};
                var names = Object.keys(payload || {});
                for (var i = 0; i < names.length; i++) {
                  var entry = payload[names[i]];
                  var value = entry && entry.get ? entry.get('value') : entry && entry.value;
                  if (names[i] !== 'ApiKeyAuth') {
                    refuse(SESSION_MESSAGE);
                    continue;
                  }
                  if (isLiveKey(value)) {
                    refuse(LIVE_KEY_MESSAGE);
                    continue;
                  }
                  accepted[names[i]] = entry;
                  authorizedKey = value;
                }
                if (Object.keys(accepted).length === names.length) clearRefusal();
                return original(accepted);
              };
            },
          },
        },
      },
    };
  }

  // Every request the page sends is marked, and one that would carry a live key is stopped
  // before it leaves (the server refuses it too: 403 LIVE_KEY_EXPLORER).
  function interceptRequest(req) {
    if (isLiveKey(headerValue(req.headers || {}, 'X-API-Key'))) {
      refuse(LIVE_KEY_MESSAGE);
      throw new Error(LIVE_KEY_MESSAGE);
    }
    if (headerValue(req.headers || {}, 'Authorization') !== undefined) {
      refuse(SESSION_MESSAGE);
      throw new Error(SESSION_MESSAGE);
    }
    req.headers = req.headers || {};
    req.headers[CLIENT_HEADER] = CLIENT_NAME;
    return req;
  }

  // swagger-ui resolves an OpenAPI 3.1 document through ApiDOM, which rebuilds the whole document
  // (about 2 MB) for every subtree it resolves: half a minute on load on a busy machine, and more
  // on each operation opened. The served document's only references are local
  // (#/components/...), so the page resolves them itself, marking each as swagger-ui's resolver
  // does ($$ref); a reference met again inside itself is left as it is.
  function pointer(root, ref) {
    var parts = ref.slice(2).split('/');
    var node = root;
    for (var i = 0; i < parts.length && node !== undefined && node !== null; i++) {
      node = node[parts[i].replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    return node;
  }

  function dereference(root, value, stack, errors) {
    if (Array.isArray(value)) {
      return value.map(function (v) {
        return dereference(root, v, stack, errors);
      });
    }
    if (value === null || typeof value !== 'object') return value;
    var ref = value.$ref;
    if (typeof ref === 'string' && ref.indexOf('#/') === 0 && stack.indexOf(ref) < 0) {
      var target = pointer(root, ref);
      if (target === undefined) {
        errors.push(new Error('Could not resolve reference ' + ref));
        return value;
      }
      var resolved = dereference(root, target, stack.concat(ref), errors);
      var out = Object.assign({}, resolved);
      Object.keys(value).forEach(function (k) {
        if (k !== '$ref') out[k] = dereference(root, value[k], stack, errors);
      });
      out.$$ref = ref;
      return out;
    }
    var copy = {};
    Object.keys(value).forEach(function (k) {
      copy[k] = dereference(root, value[k], stack, errors);
    });
    return copy;
  }

  function LocalReferences() {
    return {
      fn: {
        resolveSubtree: function (spec, path) {
          var errors = [];
          var subtree = path.reduce(function (node, key) {
            return node === undefined || node === null ? undefined : node[key];
          }, spec);
          return Promise.resolve({ spec: dereference(spec, subtree, [], errors), errors: errors });
        },
      },
    };
  }

  // This origin comes first, so try-it calls the service that serves the page; the document's
  // own servers (staging) stay listed after it.
  function withThisOrigin(spec) {
    var listed = Array.isArray(spec.servers) ? spec.servers : [];
    var others = listed.filter(function (s) {
      return s && s.url !== ORIGIN;
    });
    spec.servers = [
      { url: ORIGIN, description: 'This service (the origin serving the Explorer)' },
    ].concat(others);
    return spec;
  }

  // One tag's operations at a time: swagger-ui 5 stops rendering operations part-way once a
  // document has more than about a hundred paths (this one has over a hundred), so the page
  // renders the chosen tag's paths (with every component, so references resolve) and offers the
  // tags in a picker; #/<Tag> in the address picks one. The key authorized in one tag stays
  // authorized in the next.
  var authorizedKey = null;
  var fullSpec = null;

  function tagsOf(spec) {
    var names = (Array.isArray(spec.tags) ? spec.tags : []).map(function (t) {
      return t.name;
    });
    Object.keys(spec.paths || {}).forEach(function (path) {
      var item = spec.paths[path];
      Object.keys(item).forEach(function (method) {
        var op = item[method];
        ((op && op.tags) || []).forEach(function (t) {
          if (names.indexOf(t) < 0) names.push(t);
        });
      });
    });
    return names;
  }

  function specForTag(spec, tag) {
    var paths = {};
    Object.keys(spec.paths || {}).forEach(function (path) {
      var item = spec.paths[path];
      var kept = {};
      var any = false;
      Object.keys(item).forEach(function (method) {
        var op = item[method];
        if (op && Array.isArray(op.tags)) {
          if (op.tags.indexOf(tag) >= 0) {
            kept[method] = op;
            any = true;
          }
        } else {
          kept[method] = op; // path-level parameters, summary, servers
        }
      });
      if (any) paths[path] = kept;
    });
    var out = Object.assign({}, spec, {
      paths: paths,
      tags: (spec.tags || []).filter(function (t) {
        return t.name === tag;
      }),
    });
    if (tag !== 'Webhooks') delete out.webhooks;
    return withThisOrigin(out);
  }

  function tagFromHash(tags) {
    var m = /^#\/([^/]+)/.exec(window.location.hash);
    var wanted = m ? decodeURIComponent(m[1]) : null;
    return wanted !== null && tags.indexOf(wanted) >= 0 ? wanted : tags[0];
  }

  function render(tag) {
    window.ui = window.SwaggerUIBundle({
      spec: specForTag(fullSpec, tag),
      dom_id: '#swagger-ui',
      deepLinking: true,
      docExpansion: 'list',
      defaultModelsExpandDepth: 0,
      displayRequestDuration: true,
      persistAuthorization: false,
      validatorUrl: null,
      withCredentials: false,
      requestInterceptor: interceptRequest,
      // The request shown is the one built before the interceptor: a refused one (thrown before
      // it is sent) has no mutated request, which swagger-ui cannot render.
      showMutatedRequest: false,
      presets: [window.SwaggerUIBundle.presets.apis],
      plugins: [TestKeysOnly, LocalReferences],
      layout: 'BaseLayout',
      onComplete: function () {
        if (authorizedKey !== null) window.ui.preauthorizeApiKey('ApiKeyAuth', authorizedKey);
      },
    });
  }

  function start(spec) {
    fullSpec = spec;
    var tags = tagsOf(spec);
    var picker = document.getElementById('explorer-tag');
    tags.forEach(function (t) {
      var option = document.createElement('option');
      option.value = t;
      option.textContent = t;
      picker.appendChild(option);
    });
    picker.value = tagFromHash(tags);
    picker.addEventListener('change', function () {
      window.location.hash = '#/' + encodeURIComponent(picker.value);
      render(picker.value);
    });
    document.getElementById('explorer-tags').hidden = false;
    render(picker.value);
  }

  var headers = {};
  headers[CLIENT_HEADER] = CLIENT_NAME;
  fetch('/api/v1/openapi.json', { headers: headers })
    .then(function (res) {
      if (!res.ok) throw new Error('GET /api/v1/openapi.json answered ' + res.status);
      return res.json();
    })
    .then(start)
    .catch(function (err) {
      refuse('The OpenAPI document could not be loaded: ' + err.message);
    });
})();

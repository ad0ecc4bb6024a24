import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { FakeStripe } from "../fakes/stripe.js";
import type { FakeToss } from "../fakes/toss.js";

/**
 * Local stand-ins for the providers' browser scripts, served at the URLs the console is configured with
 * (STRIPE_JS_URL, TOSS_JS_URL), on an origin of their own as the real ones are. They implement the documented
 * browser surface the console uses, nothing more:
 *
 * - Stripe.js v3: `Stripe(pk)`, `.elements({clientSecret})`, `.create("payment")`, `.mount(el)` (an iframe on the
 *   script's origin with card fields), `.confirmPayment({elements, confirmParams:{return_url}})`, which leaves
 *   the page for the provider (here /stripe/confirm, which confirms the PaymentIntent at the fake Stripe API as
 *   Stripe's own servers would) and comes back to return_url with `payment_intent`,
 *   `payment_intent_client_secret` and `redirect_status` added.
 * - Toss Payments SDK v2: `TossPayments(clientKey).widgets({customerKey})`, `setAmount({currency, value})`,
 *   `renderPaymentMethods({selector})`, `renderAgreement({selector})` (iframes), `requestPayment({orderId,
 *   orderName, successUrl, failUrl})`, which goes to the payment window (here /toss/pay, which authorizes the
 *   payment at the fake Toss API) and comes back to successUrl with `paymentType`, `orderId`, `paymentKey` and
 *   `amount` added.
 */
export interface FakeCheckoutScripts {
  origin: string;
  stripeJsUrl: string;
  tossJsUrl: string;
  publishableKey: string;
  clientKey: string;
  /** the fake provider APIs the windows talk to, once they exist */
  bind(stripe: FakeStripe, toss: FakeToss): void;
  /** every path asked for, for assertions */
  requests: string[];
  close(): Promise<void>;
}

const STRIPE_JS = `(function () {
  var origin = new URL(document.currentScript.src).origin;
  window.Stripe = function (key, opts) {
    if (!/^pk_(test|live)_/.test(key)) throw new Error("Invalid API Key provided: " + key);
    return {
      elements: function (o) {
        if (!o || !/_secret_/.test(o.clientSecret || "")) throw new Error("elements() needs the PaymentIntent client secret");
        return {
          clientSecret: o.clientSecret,
          create: function (type) {
            var frame = null;
            return {
              mount: function (target) {
                var box = typeof target === "string" ? document.querySelector(target) : target;
                frame = document.createElement("iframe");
                frame.src = origin + "/stripe/elements?type=" + encodeURIComponent(type) + "&locale=" + ((opts && opts.locale) || "auto");
                frame.title = "Secure payment input frame";
                frame.style.height = "150px";
                box.appendChild(frame);
              },
              destroy: function () { if (frame) frame.remove(); },
            };
          },
        };
      },
      confirmPayment: function (o) {
        var secret = o.elements.clientSecret;
        var query = new URLSearchParams({
          payment_intent: secret.split("_secret_")[0],
          client_secret: secret,
          key: key,
          return_url: o.confirmParams.return_url,
        });
        window.location.assign(origin + "/stripe/confirm?" + query);
        return new Promise(function () {});
      },
    };
  };
})();
`;

const TOSS_JS = `(function () {
  var origin = new URL(document.currentScript.src).origin;
  function TossPayments(clientKey) {
    if (!/^(test|live)_(g?ck)_/.test(clientKey)) throw new Error("INVALID_CLIENT_KEY");
    return {
      widgets: function (o) {
        if (!o || !o.customerKey) throw new Error("customerKey is required");
        var amount = null;
        function frame(selector, path, height) {
          var box = document.querySelector(selector);
          if (!box) return Promise.reject(new Error("no element matches " + selector));
          var f = document.createElement("iframe");
          f.src = origin + path;
          f.title = path.indexOf("agreement") >= 0 ? "약관" : "결제수단";
          f.style.height = height;
          box.replaceChildren(f);
          return new Promise(function (resolve) { f.onload = function () { resolve({}); }; });
        }
        return {
          setAmount: function (a) { amount = a; return Promise.resolve(); },
          renderPaymentMethods: function (opt) {
            if (!amount) return Promise.reject(new Error("call setAmount first"));
            return frame(opt.selector, "/toss/methods?amount=" + amount.value, "190px");
          },
          renderAgreement: function (opt) { return frame(opt.selector, "/toss/agreement", "56px"); },
          requestPayment: function (p) {
            var query = new URLSearchParams({
              clientKey: clientKey,
              orderId: p.orderId,
              orderName: p.orderName,
              amount: String(amount.value),
              successUrl: p.successUrl,
              failUrl: p.failUrl,
            });
            window.location.assign(origin + "/toss/pay?" + query);
            return new Promise(function () {});
          },
        };
      },
    };
  }
  TossPayments.ANONYMOUS = "@@ANONYMOUS";
  window.TossPayments = TossPayments;
})();
`;

const page = (body: string) => `<!doctype html><meta charset="utf-8"><style>
body{margin:0;font:14px system-ui,sans-serif;color:#30313d}label{display:block;font-size:13px;margin:0 0 4px;color:#6d6e78}
input{box-sizing:border-box;width:100%;padding:10px;border:1px solid #e0e0e6;border-radius:6px;font:inherit;margin-bottom:10px}
.row{display:flex;gap:10px}.row>div{flex:1}.opt{display:flex;gap:8px;align-items:center;padding:10px;border:1px solid #3182f6;border-radius:8px;margin-bottom:8px;color:#191f28}
.opt.off{border-color:#e5e8eb;color:#6b7684}h3{margin:4px 0 10px;font-size:15px;color:#191f28}.agree{display:flex;gap:8px;align-items:center;color:#4e5968}
</style><body>${body}</body>`;

const STRIPE_FORM =
  page(`<label>Card number</label><input value="4242 4242 4242 4242" autocomplete="off" aria-label="Card number">
<div class="row"><div><label>Expiration</label><input value="12 / 34" aria-label="Expiration"></div><div><label>CVC</label><input value="123" aria-label="CVC"></div></div>`);

export async function startFakeCheckoutScripts(): Promise<FakeCheckoutScripts> {
  let stripe: FakeStripe | null = null;
  let toss: FakeToss | null = null;
  const requests: string[] = [];
  const publishableKey = "pk_test_console0123456789";
  const clientKey = "test_gck_console0123456789";

  const send = (res: ServerResponse, status: number, type: string, body: string, headers = {}) => {
    res.writeHead(status, { "content-type": type, "cache-control": "no-store", ...headers });
    res.end(body);
  };
  const back = (res: ServerResponse, to: string, add: Record<string, string>) => {
    const url = new URL(to);
    for (const [k, v] of Object.entries(add)) url.searchParams.set(k, v);
    send(res, 302, "text/plain", "", { location: url.toString() });
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://x");
    const q = url.searchParams;
    requests.push(url.pathname);
    if (url.pathname === "/v3/") return send(res, 200, "text/javascript", STRIPE_JS);
    if (url.pathname === "/v2/standard") return send(res, 200, "text/javascript", TOSS_JS);
    if (url.pathname === "/stripe/elements") return send(res, 200, "text/html; charset=utf-8", STRIPE_FORM);
    if (url.pathname === "/stripe/confirm") {
      // what Stripe's servers do with the browser's confirmation: the intent is paid with the card entered
      const pi = stripe?.paymentIntents.get(q.get("payment_intent") ?? "");
      if (!pi || pi.client_secret !== q.get("client_secret") || q.get("key") !== publishableKey)
        return send(res, 400, "text/plain", "no such payment intent for this key");
      stripe!.completeClientSide(pi.id);
      return back(res, q.get("return_url")!, {
        payment_intent: pi.id,
        payment_intent_client_secret: pi.client_secret,
        redirect_status: "succeeded",
      });
    }
    if (url.pathname === "/toss/methods")
      return send(
        res,
        200,
        "text/html; charset=utf-8",
        page(
          `<h3>결제 방법</h3><div class="opt">● 신용·체크카드</div><div class="opt off">○ 토스페이</div><div class="opt off">○ 계좌이체</div>`,
        ),
      );
    if (url.pathname === "/toss/agreement")
      return send(
        res,
        200,
        "text/html; charset=utf-8",
        page(`<div class="agree">☑ [필수] 결제 서비스 이용 약관, 개인정보 처리 동의</div>`),
      );
    if (url.pathname === "/toss/pay") {
      // the payment window: the card is authorized, and Toss sends the browser to successUrl
      if (!toss || q.get("clientKey") !== clientKey) return send(res, 400, "text/plain", "unknown client key");
      const amount = Number(q.get("amount"));
      const paymentKey = toss.authorize(q.get("orderId")!, amount);
      return back(res, q.get("successUrl")!, {
        paymentType: "NORMAL",
        orderId: q.get("orderId")!,
        paymentKey,
        amount: String(amount),
      });
    }
    send(res, 404, "text/plain", "not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    stripeJsUrl: `${origin}/v3/`,
    tossJsUrl: `${origin}/v2/standard`,
    publishableKey,
    clientKey,
    requests,
    bind(s, t) {
      stripe = s;
      toss = t;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

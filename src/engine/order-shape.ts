/** The shape check of an order (or a quote's order), shared by placement and quotes. */
import { isPrice, isQuantity } from './engine-state.js';
import { isSelfTradePrevention } from './self-trade.js';
import { MAX_ORDER_QUANTITY, type PlaceOrderRequest, type QuoteRequest } from './types.js';

/** Returns an error message, or null when the order is well formed. */
export function orderProblem(req: QuoteRequest): string | null {
  if (req.action !== 'BUY' && req.action !== 'SELL') return 'action must be BUY or SELL';
  if (req.side !== 'YES' && req.side !== 'NO') return 'side must be YES or NO';
  if (!isQuantity(req.quantity)) return `quantity must be an integer 1..${MAX_ORDER_QUANTITY}`;
  if (req.fillLimit !== undefined && !isQuantity(req.fillLimit)) {
    return `fillLimit must be an integer 1..${MAX_ORDER_QUANTITY}`;
  }
  const tif = req.timeInForce;
  if (tif !== undefined && tif !== 'GTC' && tif !== 'IOC' && tif !== 'FOK') {
    return 'timeInForce must be GTC, IOC or FOK';
  }
  const stp = (req as PlaceOrderRequest).selfTradePrevention;
  if (stp !== undefined && !isSelfTradePrevention(stp)) {
    return 'selfTradePrevention must be CANCEL_TAKER, CANCEL_MAKER or CANCEL_BOTH';
  }
  if (req.type === 'LIMIT') {
    if (!isPrice(req.price)) return 'LIMIT price must be an integer 1..99';
    if (req.postOnly === true && tif !== undefined && tif !== 'GTC') {
      return 'postOnly needs GTC';
    }
    return null;
  }
  if (req.type !== 'MARKET') return 'type must be LIMIT or MARKET';
  if (req.price !== undefined && req.price !== null) return 'MARKET orders take no price';
  if (tif === 'GTC') return 'MARKET orders are IOC or FOK';
  if (req.postOnly === true) return 'postOnly needs a LIMIT order';
  return null;
}

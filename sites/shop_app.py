"""The `shop` site: a small shop whose tools are HTML forms in the spec's declarative dialect.

No page script registers a tool: every tool is a `<form toolname tooldescription>` the
browser (or the harness's polyfill) turns into one. The pages are rendered on the server;
`shop/shop.js` only lets the forms marked `data-respond` answer an agent with JSON (through
`SubmitEvent.respondWith()`), while people get the normal submission.

| tool (form)       | page             | fields                                                   | submission |
|-------------------|------------------|----------------------------------------------------------|------------|
| `search_products` | `/`, `/search`   | `q` text, `category` select, `max_price` range, `colors` checkbox group, `available_by` date | `toolautosubmit`; GET `/search`; an agent gets `{"products": […]}` |
| `add_to_cart`     | `/`, `/search`   | `product` select, `quantity` number 1–10                 | `toolautosubmit`; POST `/cart`; an agent gets `{"cart": …}` |
| `view_cart`       | `/`, `/search`   | —                                                        | `toolautosubmit`; GET `/cart`: the page navigates |
| `checkout`        | `/cart`          | `name`, `email`, `address` textarea, `shipping` radio, `payment` select, `newsletter` checkbox | **no** `toolautosubmit`: the filled form waits for the user's review; POST `/checkout` navigates to `/orders/{id}` |

Every route answers JSON to `Accept: application/json` and HTML otherwise (errors are
`{"error": message}` with a 4xx status, or an HTML page saying what was wrong):

| request | JSON answer | HTML answer |
|---------|-------------|-------------|
| `GET /search?q&category&max_price&colors&available_by` | `{"products": [product, …]}` | the results page |
| `POST /cart` `product`, `quantity` (form-encoded or JSON) | 201 `{"cart": cart}` | 303 to `/cart` |
| `GET /cart` | `{"cart": cart}` | the cart page, with the checkout form |
| `POST /checkout` `name`, `email`, `address`, `shipping`, `payment`, `newsletter` | 201 `{"order": order}` | 303 to `/orders/{id}` |
| `GET /orders/{id}` | `{"order": order}` | the order page |

A product is `{id, name, category, colors, price, available_from}`; a cart is
`{items: [{product, quantity, subtotal}], total}`; an order is `{id, items, total, name,
email, address, shipping, payment, newsletter}`. One cart per running site; a reset empties
it and forgets the orders.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path
from typing import Any, Final

from aiohttp import web

STATIC_DIR: Final = Path(__file__).parent / "shop"

CATEGORIES: Final = ("kitchen", "garden", "books", "toys")
COLORS: Final = ("red", "green", "blue", "black")
SHIPPING: Final = ("standard", "express")
PAYMENT: Final = ("card", "invoice")
MAX_PRICE: Final = 200
MAX_QUANTITY: Final = 10


@dataclass(frozen=True)
class Product:
    """One product of the catalog."""

    id: str
    name: str
    category: str
    colors: tuple[str, ...]
    price: int
    available_from: str  # ISO date


PRODUCTS: Final[tuple[Product, ...]] = (
    Product("mug", "Enamel mug", "kitchen", ("red", "blue"), 12, "2024-01-01"),
    Product("board", "Oak cutting board", "kitchen", ("black",), 45, "2024-01-01"),
    Product("kettle", "Whistling kettle", "kitchen", ("red", "black"), 60, "2030-06-01"),
    Product("trowel", "Garden trowel", "garden", ("green",), 18, "2024-01-01"),
    Product("hose", "Garden hose, 20 m", "garden", ("green", "blue"), 35, "2024-03-01"),
    Product("atlas", "Pocket atlas", "books", ("blue",), 25, "2024-01-01"),
    Product("cookbook", "Weeknight cookbook", "books", ("red",), 30, "2029-09-15"),
    Product("kite", "Stunt kite", "toys", ("red", "green", "blue"), 80, "2024-01-01"),
)
PRODUCTS_BY_ID: Final = {p.id: p for p in PRODUCTS}


def _product(product: Product) -> dict[str, Any]:
    data = asdict(product)
    data["colors"] = list(product.colors)
    return data


def _no_store(response: web.StreamResponse) -> web.StreamResponse:
    # Tests reset the data between runs; a cached page or answer would show a stale cart.
    response.headers["Cache-Control"] = "no-store"
    return response


def wants_json(request: web.Request) -> bool:
    """Whether the client asked for JSON (`Accept: application/json`)."""
    return "application/json" in request.headers.get("Accept", "")


class ShopError(Exception):
    """A request the shop refuses: the message says what was wrong."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def search(query: Mapping[str, Any]) -> list[Product]:
    """The products matching a search (`colors`: a list; empty fields match everything)."""
    text = str(query.get("q") or "").strip().lower()
    category = str(query.get("category") or "")
    if category and category not in CATEGORIES:
        raise ShopError(f"category must be one of {', '.join(CATEGORIES)} (or empty)")
    max_price = _number(query.get("max_price"), "max_price", MAX_PRICE)
    colors = [str(c) for c in query.get("colors") or []]
    unknown = sorted(set(colors) - set(COLORS))
    if unknown:
        raise ShopError(f"unknown colors {', '.join(unknown)}; colors are {', '.join(COLORS)}")
    available_by = str(query.get("available_by") or "")
    if available_by:
        try:
            date.fromisoformat(available_by)
        except ValueError:
            raise ShopError(
                f"available_by must be a date (YYYY-MM-DD), not {available_by!r}"
            ) from None
    return [
        p
        for p in PRODUCTS
        if (not text or text in p.name.lower())
        and (not category or p.category == category)
        and p.price <= max_price
        and (not colors or set(colors) & set(p.colors))
        and (not available_by or p.available_from <= available_by)
    ]


def _number(value: Any, name: str, default: float) -> float:
    if value in (None, ""):
        return default
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ShopError(f"{name} must be a number, not {value!r}") from None


class ShopSite:
    """One running instance of the shop: its cart, its orders, routes, reset and close."""

    def __init__(self) -> None:
        self.cart: dict[str, int] = {}
        """Quantity by product id."""
        self.orders: list[dict[str, Any]] = []
        """Every order placed, oldest first (ids 1, 2, …)."""

    def routes(self) -> Iterable[web.AbstractRouteDef]:
        """The pages (which answer JSON too), the script and the style sheet."""
        return [
            web.get("/", self.home),
            web.get("/search", self.search),
            web.get("/cart", self.view_cart),
            web.post("/cart", self.add_to_cart),
            web.post("/checkout", self.checkout),
            web.get("/orders/{id}", self.order),
            web.get(r"/{file:[a-z_]+\.(?:js|css)}", self.static_file),
        ]

    async def reset(self) -> None:
        """Empty the cart and forget the orders."""
        self.cart.clear()
        self.orders.clear()

    async def close(self) -> None:
        """Nothing to release: the data lives in memory."""

    # -- the data ----------------------------------------------------------------------

    def cart_json(self) -> dict[str, Any]:
        """The cart as the API answers it."""
        items = [
            {
                "product": _product(PRODUCTS_BY_ID[pid]),
                "quantity": qty,
                "subtotal": PRODUCTS_BY_ID[pid].price * qty,
            }
            for pid, qty in self.cart.items()
        ]
        return {"items": items, "total": sum(item["subtotal"] for item in items)}

    def add(self, fields: Mapping[str, Any]) -> None:
        """Add a product to the cart (at most MAX_QUANTITY of each)."""
        product = str(fields.get("product") or "")
        if product not in PRODUCTS_BY_ID:
            raise ShopError(f"no product {product!r}; products are {', '.join(PRODUCTS_BY_ID)}")
        quantity = _number(fields.get("quantity"), "quantity", 1)
        if quantity != int(quantity) or not 1 <= quantity <= MAX_QUANTITY:
            raise ShopError(f"quantity must be a whole number from 1 to {MAX_QUANTITY}")
        total = self.cart.get(product, 0) + int(quantity)
        if total > MAX_QUANTITY:
            raise ShopError(f"at most {MAX_QUANTITY} of {product!r} per order")
        self.cart[product] = total

    def place_order(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Turn the cart into an order and empty it."""
        if not self.cart:
            raise ShopError("the cart is empty; add products before checking out")
        missing = [f for f in ("name", "email", "address", "shipping") if not fields.get(f)]
        if missing:
            raise ShopError(f"missing {', '.join(missing)}")
        if "@" not in str(fields["email"]):
            raise ShopError(f"email {fields['email']!r} has no @")
        if fields["shipping"] not in SHIPPING:
            raise ShopError(f"shipping must be one of {', '.join(SHIPPING)}")
        payment = str(fields.get("payment") or "card")
        if payment not in PAYMENT:
            raise ShopError(f"payment must be one of {', '.join(PAYMENT)}")
        cart = self.cart_json()
        order = {
            "id": len(self.orders) + 1,
            "items": cart["items"],
            "total": cart["total"],
            "name": str(fields["name"]),
            "email": str(fields["email"]),
            "address": str(fields["address"]),
            "shipping": fields["shipping"],
            "payment": payment,
            "newsletter": str(fields.get("newsletter") or "") in ("on", "true", "1"),
        }
        self.orders.append(order)
        self.cart.clear()
        return order

    # -- routes ------------------------------------------------------------------------

    async def home(self, request: web.Request) -> web.StreamResponse:
        """The catalog: every product, and the search, add-to-cart and view-cart tools."""
        return self._page(
            "Catalog",
            _search_form({})
            + _product_table(list(PRODUCTS))
            + _add_to_cart_form()
            + _view_cart_form(),
        )

    async def search(self, request: web.Request) -> web.StreamResponse:
        """`GET /search`: matching products (JSON), or the results page."""
        query: dict[str, Any] = dict(request.query)
        query["colors"] = request.query.getall("colors", [])
        try:
            found = search(query)
        except ShopError as exc:
            return self._error(request, exc)
        if wants_json(request):
            return _no_store(web.json_response({"products": [_product(p) for p in found]}))
        return self._page(
            "Search results",
            _search_form(query)
            + f"<h2>{len(found)} product{'s' if len(found) != 1 else ''} found</h2>"
            + _product_table(found)
            + _add_to_cart_form()
            + _view_cart_form(),
        )

    async def add_to_cart(self, request: web.Request) -> web.StreamResponse:
        """`POST /cart`: add a product; JSON answers the cart, HTML goes to `/cart`."""
        try:
            self.add(await _fields(request))
        except ShopError as exc:
            return self._error(request, exc)
        if wants_json(request):
            return _no_store(web.json_response({"cart": self.cart_json()}, status=201))
        raise web.HTTPSeeOther("/cart")

    async def view_cart(self, request: web.Request) -> web.StreamResponse:
        """`GET /cart`: the cart (JSON), or its page with the checkout form."""
        if wants_json(request):
            return _no_store(web.json_response({"cart": self.cart_json()}))
        cart = self.cart_json()
        rows = "".join(
            f"<tr><td>{html.escape(item['product']['name'])}</td><td>{item['quantity']}</td>"
            f"<td>${item['subtotal']}</td></tr>"
            for item in cart["items"]
        )
        body = (
            f"<table><tr><th>Product</th><th>Quantity</th><th>Subtotal</th></tr>{rows}</table>"
            f"<p>Total: <strong>${cart['total']}</strong></p>"
            if cart["items"]
            else '<p class="empty">The cart is empty.</p>'
        )
        return self._page("Cart", "<h2>Your cart</h2>" + body + _checkout_form())

    async def checkout(self, request: web.Request) -> web.StreamResponse:
        """`POST /checkout`: place the order; JSON answers it, HTML goes to its page."""
        try:
            order = self.place_order(await _fields(request))
        except ShopError as exc:
            return self._error(request, exc)
        if wants_json(request):
            return _no_store(web.json_response({"order": order}, status=201))
        raise web.HTTPSeeOther(f"/orders/{order['id']}")

    async def order(self, request: web.Request) -> web.StreamResponse:
        """`GET /orders/{id}`."""
        raw = request.match_info["id"]
        order = next((o for o in self.orders if str(o["id"]) == raw), None)
        if order is None:
            return self._error(request, ShopError(f"no order {raw!r}", status=404))
        if wants_json(request):
            return _no_store(web.json_response({"order": order}))
        items = "".join(
            f"<li>{item['quantity']} × {html.escape(item['product']['name'])}</li>"
            for item in order["items"]
        )
        return self._page(
            f"Order {order['id']}",
            f"<h2>Thank you, {html.escape(order['name'])}!</h2>"
            f'<p>Order <strong id="order-id">{order["id"]}</strong>: ${order["total"]}, '
            f"{html.escape(order['shipping'])} shipping to {html.escape(order['address'])}.</p>"
            f"<ul>{items}</ul>",
        )

    async def static_file(self, request: web.Request) -> web.StreamResponse:
        """The script or the style sheet (the route pattern allows no paths)."""
        path = STATIC_DIR / request.match_info["file"]
        if not path.is_file():
            return self._error(request, ShopError(f"no such file: {request.path}", status=404))
        return _no_store(web.FileResponse(path))

    # -- rendering ---------------------------------------------------------------------

    def _page(self, title: str, main: str, status: int = 200) -> web.StreamResponse:
        template = (STATIC_DIR / "page.html").read_text(encoding="utf-8")
        count = sum(self.cart.values())
        page = (
            template.replace("<!-- title -->", html.escape(title))
            .replace("<!-- cart count -->", str(count))
            .replace("<!-- main -->", main)
        )
        return _no_store(web.Response(text=page, content_type="text/html", status=status))

    def _error(self, request: web.Request, exc: ShopError) -> web.StreamResponse:
        if wants_json(request):
            return _no_store(web.json_response({"error": str(exc)}, status=exc.status))
        return self._page(
            "Error", f'<p class="error" role="alert">{html.escape(str(exc))}</p>', exc.status
        )


async def _fields(request: web.Request) -> dict[str, Any]:
    """A request's fields: a JSON object, or a form (form-encoded or multipart)."""
    if request.content_type == "application/json":
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ShopError(f"body is not valid JSON: {exc}") from None
        if not isinstance(body, dict):
            raise ShopError("body must be a JSON object")
        return body
    return dict(await request.post())


def _option(value: str, label: str, selected: bool) -> str:
    return (
        f'<option value="{html.escape(value)}"{" selected" if selected else ""}>'
        f"{html.escape(label)}</option>"
    )


def _search_form(query: Mapping[str, Any]) -> str:
    category = str(query.get("category") or "")
    colors = set(query.get("colors") or [])
    max_price = html.escape(str(query.get("max_price") or MAX_PRICE))
    boxes = "".join(
        f'<label><input type="checkbox" name="colors" value="{c}"'
        f"{' checked' if c in colors else ''}> {c.title()}</label>"
        for c in COLORS
    )
    options = _option("", "Any category", category == "") + "".join(
        _option(c, c.title(), c == category) for c in CATEGORIES
    )
    return f"""
      <form toolname="search_products" tooldescription="Search the shop's products by name, category, price, colour and availability date." toolautosubmit action="/search" method="get" data-respond>
        <h2>Search</h2>
        <label>Name contains <input name="q" value="{html.escape(str(query.get("q") or ""))}" toolparamdescription="Words from the product name, e.g. kettle"></label>
        <label for="category">Category</label>
        <select id="category" name="category">{options}</select>
        <label>Maximum price in dollars <input type="range" name="max_price" min="0" max="{MAX_PRICE}" step="5" value="{max_price}"></label>
        <fieldset toolparamdescription="Colours the product comes in (any of them)"><legend>Colours</legend>{boxes}</fieldset>
        <label>Available by <input type="date" name="available_by" value="{html.escape(str(query.get("available_by") or ""))}"></label>
        <button>Search</button>
      </form>"""


def _product_table(products: list[Product]) -> str:
    if not products:
        return '<p class="empty">No products match.</p>'
    rows = "".join(
        f'<tr data-id="{p.id}"><td>{html.escape(p.name)}</td><td>{p.category}</td>'
        f"<td>{', '.join(p.colors)}</td><td>${p.price}</td><td>{p.available_from}</td></tr>"
        for p in products
    )
    return (
        "<table><tr><th>Product</th><th>Category</th><th>Colours</th><th>Price</th>"
        f"<th>Available from</th></tr>{rows}</table>"
    )


def _add_to_cart_form() -> str:
    options = "".join(_option(p.id, f"{p.name} (${p.price})", False) for p in PRODUCTS)
    return f"""
      <form toolname="add_to_cart" tooldescription="Put a product in the shopping cart." toolautosubmit action="/cart" method="post" data-respond>
        <h2>Add to cart</h2>
        <label>Product <select name="product" required>{options}</select></label>
        <label>Quantity <input type="number" name="quantity" min="1" max="{MAX_QUANTITY}" value="1" required></label>
        <button>Add to cart</button>
      </form>"""


def _view_cart_form() -> str:
    return """
      <form toolname="view_cart" tooldescription="Open the cart page, where the checkout is." toolautosubmit action="/cart" method="get">
        <button>View cart</button>
      </form>"""


def _checkout_form() -> str:
    shipping = "".join(
        f'<label><input type="radio" name="shipping" value="{s}" required> {s.title()}</label>'
        for s in SHIPPING
    )
    payment = "".join(_option(p, p.title(), p == "card") for p in PAYMENT)
    return f"""
      <form toolname="checkout" tooldescription="Place the order for everything in the cart. The customer reviews the filled form and submits it." action="/checkout" method="post">
        <h2>Checkout</h2>
        <label>Full name <input name="name" autocomplete="name" required></label>
        <label>Email <input type="email" name="email" autocomplete="email" required></label>
        <label>Delivery address <textarea name="address" autocomplete="street-address" required></textarea></label>
        <fieldset toolparamdescription="How fast the order ships"><legend>Shipping</legend>{shipping}</fieldset>
        <label>Payment <select name="payment">{payment}</select></label>
        <label><input type="checkbox" name="newsletter"> Send me the newsletter</label>
        <button>Place order</button>
      </form>"""

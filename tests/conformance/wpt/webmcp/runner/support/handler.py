"""A wptserve Python handler: the runner never runs it."""


def main(request, response):
    return "ran"

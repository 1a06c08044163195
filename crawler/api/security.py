"""Guards for the admin crawler surface (filled in by the admin-control work)."""


class AdminGuardMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

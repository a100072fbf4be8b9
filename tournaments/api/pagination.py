"""Page-numbered lists; the client may ask for a page size up to a cap."""

from rest_framework import pagination


class PageNumberPagination(pagination.PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = 200

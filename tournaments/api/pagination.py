"""Page-numbered lists; the client may ask for a page size up to a cap."""

from typing import Any

from rest_framework import pagination
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request


class PageNumberPagination(pagination.PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = 200

    def get_page_size(self, request: Request) -> int | None:
        # A page size that is not a whole number of at least 1 is refused, not read as the
        # default; one above the cap is read as the cap.
        asked = request.query_params.get(self.page_size_query_param)
        if asked is not None and not (asked.isascii() and asked.isdigit() and int(asked) >= 1):
            raise ValidationError({self.page_size_query_param: ["A whole number of at least 1."]})
        return super().get_page_size(request)

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"]["minimum"] = 1
                parameter["description"] = f"results per page; above {self.max_page_size}, that"
            elif parameter["name"] == self.page_query_param:
                parameter["schema"]["minimum"] = 1
        return parameters

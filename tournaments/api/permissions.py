"""Who may do what through the API."""

from __future__ import annotations

from rest_framework import permissions

from tournaments.models import is_organiser


class IsOwnerOrReadOnly(permissions.BasePermission):
    """Anyone may read; only the owner may change, staff included."""

    message = "Only the bot's owner may change it."

    def has_object_permission(self, request, view, obj) -> bool:
        return request.method in permissions.SAFE_METHODS or obj.owner_id == request.user.pk


class IsOrganiserOrReadOnly(permissions.BasePermission):
    """Anyone may read; staff and organisers may create."""

    message = "Only staff and organisers may do this."

    def has_permission(self, request, view) -> bool:
        if request.method in permissions.SAFE_METHODS:
            return True
        if not request.user.is_authenticated:
            return False
        return is_organiser(request.user)


class IsStaffOrReadOnly(permissions.BasePermission):
    """Anyone may read; only staff switch ladders on, pause and resume them."""

    message = "Only staff may change ladders."

    def has_permission(self, request, view) -> bool:
        return request.method in permissions.SAFE_METHODS or bool(request.user.is_staff)

"""The REST API: thin views and serializers over services and selectors."""

"""capmodel.plan"""
